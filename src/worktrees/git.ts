import { execFile, type ExecFileOptions } from "node:child_process";

/** What a command printed and how it ended; `exitCode` null if a signal ended it. */
export interface CommandResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A project command's output is kept to this much: enough to read why a check failed, never the host's memory. */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * Runs `command` (no shell) in `cwd` as the leader of its own process group, as the host's other children; settles with its
 * output and exit code whatever the code. Rejects only if it could not start (named in the error).
 */
export function runCommand(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<CommandResult> {
  // execFile passes `detached` on to spawn, though its type does not list it.
  const options: ExecFileOptions & { detached: true; encoding: "utf8" } = { cwd, env, encoding: "utf8", maxBuffer: MAX_OUTPUT_BYTES, detached: true };
  return new Promise((resolve, reject) => {
    execFile(command, args, options, (error, stdout, stderr) => {
      // A number is the exit code; a string says it could not run (ENOENT) or printed too much.
      const code = (error as (Error & { code?: number | string }) | null)?.code;
      if (typeof code === "string") return reject(new Error(`cannot run ${command} in ${cwd}: ${code}`));
      resolve({ exitCode: error ? (code ?? null) : 0, stdout, stderr });
    });
  });
}

/** A git command that failed: its arguments and what git said. */
export class GitError extends Error {
  override readonly name = "GitError";
  constructor(
    readonly args: readonly string[],
    readonly result: CommandResult,
  ) {
    super(`git ${args.join(" ")} failed: ${(result.stderr || result.stdout).trim()}`);
  }
}

/** Runs git in `cwd` (never asking for anything on a terminal); its standard output, or a {@link GitError}. */
export async function git(cwd: string, args: readonly string[]): Promise<string> {
  const result = await tryGit(cwd, args);
  if (result.exitCode !== 0) throw new GitError(args, result);
  return result.stdout;
}

/** Runs git in `cwd`; its result whatever its exit code (for commands whose failure is an answer). */
export function tryGit(cwd: string, args: readonly string[]): Promise<CommandResult> {
  return runCommand("git", args, cwd, { ...process.env, GIT_TERMINAL_PROMPT: "0" });
}
