import { runCommand, type CommandResult } from "./run-command.js";

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
  return runCommand("git", args, cwd, { env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
}
