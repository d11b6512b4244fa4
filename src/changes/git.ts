import { execFile, type ExecFileOptionsWithBufferEncoding } from "node:child_process";

/** A git that does not answer within this is stopped, with everything it started. */
const GIT_TIMEOUT_MS = 30_000;
/** Output past this is an error rather than memory: per-file texts are cut well below it. */
const GIT_MAX_BUFFER = 64 * 1024 * 1024;

export interface GitOptions {
  /** Set for the child only (never the host's own environment), e.g. `GIT_INDEX_FILE`. */
  readonly env?: Readonly<Record<string, string>>;
  /** Resolve with stdout even when git exits non-zero (a `git diff --no-index` with differences exits 1). */
  readonly allowExitCodes?: readonly number[];
}

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(" ")} failed (${exitCode === null ? "stopped" : `exit code ${exitCode}`}): ${stderr.trim() || "no message"}`);
  }
}

/**
 * Runs `git args` in `cwd` as the leader of its own process group (as Berth's other children),
 * so a hung git and whatever it started (a credential helper, a pager it should not start) is
 * stopped as a group. Stdout as a Buffer: file contents may be any bytes.
 */
export function git(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // execFile hands `detached` on to spawn (its own process group), though its type leaves it out.
    const spawnOptions: ExecFileOptionsWithBufferEncoding & { detached: boolean } = {
      cwd,
      encoding: "buffer",
      maxBuffer: GIT_MAX_BUFFER,
      detached: true,
      // No pager, no prompt for credentials, no lock on the index for a read (the agent may be running git too).
      env: { ...process.env, GIT_PAGER: "cat", GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C", ...options.env },
    };
    const child = execFile("git", [...args], spawnOptions, (error, stdout, stderr) => {
      clearTimeout(timer);
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      if (code !== null && (code === 0 || options.allowExitCodes?.includes(code))) return resolve(stdout);
      // Not even started: said in words, not as a spawn error code.
      const missing = error?.code === "ENOENT" ? "git is not installed on this host (Berth runs it to show a session's changes)" : undefined;
      reject(new GitError(args, code, missing ?? (stderr.toString("utf8") || (error?.message ?? ""))));
    });
    const timer = setTimeout(() => {
      // The negative pid is the group: git and anything it started.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }, GIT_TIMEOUT_MS);
  });
}
