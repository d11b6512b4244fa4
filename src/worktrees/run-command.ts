import { spawn } from "node:child_process";

/** What a command printed and how it ended: its exit code, else `stopped` (it outlived its time and was killed). */
export interface CommandResult {
  readonly exitCode: number | null;
  readonly stopped: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** A command's output is kept to this much: enough to read why a check failed, never the host's memory. */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * Runs `command` (no shell) in `cwd` as the leader of its own process group, as the host's other children; settles with
 * its output and exit code whatever the code, once it exited and its output ended. Past `timeoutMs` the whole group is
 * killed. Rejects only if it could not start, or printed more than 4 MiB (its group killed; named in the error).
 */
export function runCommand(
  command: string,
  args: readonly string[],
  cwd: string,
  options: { readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const output = { stdout: [] as Buffer[], stderr: [] as Buffer[], bytes: 0 };
    let stopped = false;
    let failed: Error | undefined;
    const stop = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // The group is gone already.
      }
    };
    const outlived = () => {
      stopped = true;
      stop();
    };
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(outlived, options.timeoutMs);
    for (const stream of ["stdout", "stderr"] as const) {
      child[stream].on("data", (chunk: Buffer) => {
        output.bytes += chunk.length;
        if (output.bytes > MAX_OUTPUT_BYTES) {
          failed ??= new Error(`${command} in ${cwd} printed more than 4 MiB and was stopped`);
          stop();
        } else output[stream].push(chunk);
      });
    }
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${command} in ${cwd}: ${error.message}`));
    });
    // `close`: exited and its output ended (a child that outlived it and holds the pipes is killed with the group).
    child.once("close", (exitCode) => {
      clearTimeout(timer);
      if (failed) return reject(failed);
      resolve({ exitCode, stopped, stdout: Buffer.concat(output.stdout).toString("utf8"), stderr: Buffer.concat(output.stderr).toString("utf8") });
    });
  });
}
