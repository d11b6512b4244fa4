import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { formatDuration } from "../config/durations.js";
import { runCommand, type CommandResult } from "../processes/run-command.js";
import { sandboxedCommand, type SandboxPlan } from "../sandbox/bwrap-args.js";

/** A step's output is kept to this much: enough to read why a check failed, never the host's memory. */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** A project's own step for its worktrees: `setup` before the agent starts, `check` before landing. */
export type ProjectStep = "setup" | "check";

export interface StepOutcome {
  /** The command as shown in the journal and errors. */
  readonly command: string;
  readonly exitCode: number | null;
  /** Why it failed, in words (`failed with exit code 3`); undefined if it passed. */
  readonly failure: string | undefined;
  /** Its standard output and error, in that order. */
  readonly output: string;
}

/**
 * Runs the step in the worktree: the configured shell command if there is one, else the repository's executable
 * `.berth/<step>` (as checked out in the worktree), else nothing (undefined). Its own process group, as every child.
 * The repository's script runs in `sandbox` when the session has one: the agent could have written it. The
 * configured command is the person's, and runs as Berth does.
 */
export async function runProjectStep(
  step: ProjectStep,
  worktree: string,
  configured: string | undefined,
  timeoutMs: number,
  sandbox: SandboxPlan | undefined,
): Promise<StepOutcome | undefined> {
  const file = join(worktree, ".berth", step);
  const chosen =
    configured !== undefined
      ? { command: "/bin/sh", args: ["-c", configured] }
      : isExecutable(file)
        ? repositoryScript(file, worktree, sandbox)
        : undefined;
  if (chosen === undefined) return undefined;
  const result = await runCommand(chosen.command, chosen.args, worktree, { timeoutMs, maxOutputBytes: MAX_OUTPUT_BYTES });
  return {
    command: configured ?? `.berth/${step}`,
    exitCode: result.exitCode,
    failure: failureOf(result, timeoutMs),
    output: result.stdout.toString("utf8") + result.stderr.toString("utf8"),
  };
}

/** Why a step failed, in words; undefined if it passed. */
function failureOf(result: CommandResult, timeoutMs: number): string | undefined {
  switch (result.end) {
    case "timed_out":
      return `did not end within ${formatDuration(timeoutMs)} (worktrees.timeout) and was stopped`;
    case "output_over_limit":
      return "printed more than 4 MiB and was stopped";
    case "signalled":
      return "was ended by a signal";
    case "exited":
      return result.exitCode === 0 ? undefined : `failed with exit code ${result.exitCode}`;
  }
}

function repositoryScript(file: string, worktree: string, sandbox: SandboxPlan | undefined): { command: string; args: string[] } {
  return sandbox ? sandboxedCommand(sandbox, file, [], worktree) : { command: file, args: [] };
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
