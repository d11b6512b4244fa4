import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { LOOPBACK_HOST } from "./port-allocation.js";

export type PortWaitOutcome = "listening" | "timed-out" | "aborted";

export interface PortWaitOptions {
  readonly timeoutMs: number;
  /** Pause between connection attempts (default 25 ms). */
  readonly intervalMs?: number;
  /** Ends the wait early with `aborted`: the process exited, or its start was called off. */
  readonly signal?: AbortSignal;
}

const DEFAULT_INTERVAL_MS = 25;

/** Polls until `port` on the loopback address accepts a TCP connection, the time is up, or the signal aborts. */
export async function waitForPort(port: number, options: PortWaitOptions): Promise<PortWaitOutcome> {
  const { timeoutMs, signal } = options;
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (signal?.aborted) return "aborted";
    const remaining = deadline - Date.now();
    if (remaining <= 0) return "timed-out";
    if (await acceptsConnection(port, remaining)) return signal?.aborted ? "aborted" : "listening";
    const pause = Math.min(intervalMs, Math.max(0, deadline - Date.now()));
    await sleep(pause, undefined, { signal }).catch(() => undefined);
  }
}

/** One attempt; a connection that neither opens nor fails within `timeoutMs` counts as not accepted. */
function acceptsConnection(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: LOOPBACK_HOST });
    const settle = (accepted: boolean): void => {
      socket.destroy();
      resolve(accepted);
    };
    socket.setTimeout(timeoutMs, () => settle(false));
    socket.once("connect", () => settle(true));
    socket.once("error", () => settle(false));
  });
}
