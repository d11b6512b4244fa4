import { type ChildProcess, spawn, spawnSync } from "node:child_process";

/**
 * A probe that may need to run one short command to find its answer: the answer already, or the command and what its
 * outcome means. The same probe then runs either blocking (on first use) or without blocking the event loop (at start,
 * alongside the host's other work).
 */
export type Probing<T> = { readonly answer: T } | { readonly run: ProbeCommand; readonly finish: (ran: ProbeRun) => T };

interface ProbeCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Killed after this long (its stdin and stdout are ignored, its stderr read). */
  readonly timeoutMs: number;
}

/** How the command ended: its exit status (null when killed), what it wrote on stderr, the error that stopped it. */
interface ProbeRun {
  readonly status: number | null;
  readonly stderr: string;
  readonly error?: Error;
}

export function settleSync<T>(probing: Probing<T>): T {
  if ("answer" in probing) return probing.answer;
  const { command, args, timeoutMs } = probing.run;
  const ran = spawnSync(command, args, { stdio: ["ignore", "ignore", "pipe"], timeout: timeoutMs });
  return probing.finish({ status: ran.status, stderr: ran.stderr?.toString() ?? "", ...(ran.error ? { error: ran.error } : {}) });
}

export function settle<T>(probing: Probing<T>): Promise<T> {
  if ("answer" in probing) return Promise.resolve(probing.answer);
  const { command, args, timeoutMs } = probing.run;
  return new Promise((resolve, reject) => {
    let settled = false;
    const stderr: Buffer[] = [];
    const end = (status: number | null, error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try {
        resolve(probing.finish({ status: error ? null : status, stderr: Buffer.concat(stderr).toString(), ...(error ? { error } : {}) }));
      } catch (finishError) {
        reject(finishError);
      }
    };
    // As spawnSync's timeout, the run ends at the deadline with ETIMEDOUT, even if something still holds its stderr.
    const timer = setTimeout(() => {
      if (child?.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // The group is gone already (it ended just now).
        }
      }
      child?.stderr?.destroy();
      end(null, Object.assign(new Error(`spawn ${command} ETIMEDOUT`), { code: "ETIMEDOUT" }));
    }, timeoutMs);
    let child: ChildProcess | undefined;
    try {
      // Its own process group, stopped as one if it overruns (spawnSync's timeout signals the command alone).
      child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
    } catch (spawnError) {
      // spawn throws some errors (ETXTBSY, ENOMEM, E2BIG) that spawnSync reports as the run's error.
      end(null, spawnError as Error);
      return;
    }
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    let error: Error | undefined;
    child.once("error", (spawnError) => {
      error ??= spawnError;
      end(null, error);
    });
    child.once("close", (status) => end(status, error));
  });
}
