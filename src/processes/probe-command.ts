import { spawn, spawnSync } from "node:child_process";

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
    // Its own process group, stopped as one if it overruns (spawnSync's timeout signals the command alone).
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
    const stderr: Buffer[] = [];
    let error: Error | undefined;
    // As spawnSync's timeout: the command is killed and the run fails with ETIMEDOUT.
    const timer = setTimeout(() => {
      error = Object.assign(new Error(`spawn ${command} ETIMEDOUT`), { code: "ETIMEDOUT" });
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    }, timeoutMs);
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.once("error", (spawnError) => {
      error ??= spawnError;
    });
    child.once("close", (status) => {
      clearTimeout(timer);
      try {
        resolve(probing.finish({ status: error ? null : status, stderr: Buffer.concat(stderr).toString(), ...(error ? { error } : {}) }));
      } catch (finishError) {
        reject(finishError);
      }
    });
  });
}
