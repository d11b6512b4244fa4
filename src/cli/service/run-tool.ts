import { spawnSync } from "node:child_process";

/** What a service manager's command-line tool did: it ran (with its exit code and output), or it is not installed. */
export type ToolRun =
  | { readonly state: "ran"; readonly code: number; readonly stdout: string; readonly stderr: string }
  | { readonly state: "missing" };

/**
 * Runs `systemctl`, `launchctl` and the like, waiting for them: they return once the manager has done the job, and a
 * stop job ends within the unit's own stop timeout (which a timeout here could only cut short).
 */
export function runTool(command: string, args: readonly string[]): ToolRun {
  const result = spawnSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") return { state: "missing" };
  if (result.error) throw result.error;
  return { state: "ran", code: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

/** The tool's own words on why it failed, for a one-line error: the first line of its stderr, else of its stdout. */
export function toolComplaint(run: ToolRun & { state: "ran" }): string {
  const lines = `${run.stderr}\n${run.stdout}`.split("\n").map((line) => line.trim());
  return lines.find((line) => line !== "") ?? `exit status ${run.code}`;
}
