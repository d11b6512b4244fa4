import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { runCommand } from "./git.js";

/** A project's own step for its worktrees: `setup` before the agent starts, `check` before landing. */
export type ProjectStep = "setup" | "check";

export interface StepOutcome {
  /** The command as shown in the journal and errors. */
  readonly command: string;
  readonly exitCode: number | null;
  /** Its standard output and error, in that order. */
  readonly output: string;
}

/**
 * Runs the step in the worktree: the configured shell command if there is one, else the repository's executable
 * `.berth/<step>` (as checked out in the worktree), else nothing (undefined). Its own process group, as every child.
 */
export async function runProjectStep(step: ProjectStep, worktree: string, configured: string | undefined): Promise<StepOutcome | undefined> {
  const file = join(worktree, ".berth", step);
  const [command, args] = configured !== undefined ? ["/bin/sh", ["-c", configured]] : isExecutable(file) ? [file, []] : [undefined, []];
  if (command === undefined) return undefined;
  const result = await runCommand(command, args, worktree);
  return { command: configured ?? `.berth/${step}`, exitCode: result.exitCode, output: result.stdout + result.stderr };
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
