import { existsSync } from "node:fs";
import { CommandStartError, runCommand, type CommandResult } from "../processes/run-command.js";

/** A git that does not answer within this is stopped, with everything it started (a credential helper, a hook). */
const GIT_TIMEOUT_MS = 30_000;
/** Output past this stops git rather than fill the host's memory: per-file texts are cut well below it. */
const GIT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * Why git failed: it `refused` (exited non-zero: the repository or the request is not as asked, git's message says
 * why), it was `stopped` (outlived its time or printed past the bound), or it is `not_installed` on this host.
 */
export type GitFailure = "refused" | "stopped" | "not_installed";

export interface GitOptions {
  /** Set for this git only (never the host's own environment), e.g. `GIT_INDEX_FILE`. */
  readonly env?: Readonly<Record<string, string>>;
  /** Default 30 s; commands that run the repository's hooks or write a whole tree pass more. */
  readonly timeoutMs?: number;
}

/** A git command that failed: its arguments, how it failed, its exit code (null unless it `refused`) and what it said. */
export class GitError extends Error {
  override readonly name = "GitError";
  constructor(
    readonly args: readonly string[],
    readonly failure: GitFailure,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(
      `git ${args.join(" ")} failed (${failure === "refused" ? `exit code ${exitCode}` : failure.replace("_", " ")}): ${stderr.trim() || "no message"}`,
    );
  }
}

/** git's text output as it ended, whatever its exit code (for commands whose failure is an answer). */
export interface GitResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs git in `cwd`; its standard output as bytes (file contents may be any), else a {@link GitError}. */
export async function gitBytes(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<Buffer> {
  const result = await run(cwd, args, options);
  if (result.exitCode !== 0) throw new GitError(args, "refused", result.exitCode, result.stderr.toString("utf8") || result.stdout.toString("utf8"));
  return result.stdout;
}

/** Runs git in `cwd`; its standard output as text, else a {@link GitError}. */
export async function git(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  return (await gitBytes(cwd, args, options)).toString("utf8");
}

/**
 * Runs git in `cwd`; its result whatever its exit code, for commands whose exit code is an answer
 * (`merge-base --is-ancestor`). A git stopped or missing is still a {@link GitError}.
 */
export async function tryGit(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  const result = await run(cwd, args, options);
  return { exitCode: result.exitCode, stdout: result.stdout.toString("utf8"), stderr: result.stderr.toString("utf8") };
}

/**
 * git as every caller needs it: its own process group (stopped as a group past its time), no pager, no prompt for
 * credentials, no optional lock on the index (the agent may be running git too), messages in one language.
 */
async function run(cwd: string, args: readonly string[], options: GitOptions): Promise<CommandResult & { exitCode: number }> {
  const env = { ...process.env, GIT_PAGER: "cat", GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C", ...options.env };
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  let result: CommandResult;
  try {
    result = await runCommand("git", args, cwd, { env, timeoutMs, maxOutputBytes: GIT_MAX_OUTPUT_BYTES });
  } catch (error) {
    if (!(error instanceof CommandStartError) || error.code !== "ENOENT") throw error;
    // spawn says ENOENT for a missing directory too: that is the request's, not the host's.
    if (!existsSync(cwd)) throw new GitError(args, "refused", null, `the directory ${cwd} does not exist`);
    throw new GitError(args, "not_installed", null, "git is not installed on this host (Berth runs it for sessions' changes and worktrees)");
  }
  if (result.end === "timed_out") throw new GitError(args, "stopped", null, `git did not answer within ${timeoutMs / 1000} s and was stopped`);
  if (result.end === "output_over_limit") throw new GitError(args, "stopped", null, "git printed more than 64 MiB and was stopped");
  if (result.end === "signalled") throw new GitError(args, "stopped", null, "git was ended by a signal");
  return { ...result, exitCode: result.exitCode! };
}
