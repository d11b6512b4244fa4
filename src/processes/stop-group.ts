import { setTimeout as sleep } from "node:timers/promises";
import { groupIsAlive, signalGroup } from "./group-signals.js";

/** How a stop ended: the group left after the polite signal, had to be killed, or was gone already. */
export type StopOutcome = "exited" | "killed" | "already-gone";

export interface StopOptions {
  /** How long the group may take to leave after SIGTERM before it is killed (default 3 s). */
  readonly graceMs?: number;
  /** How often the group is probed while waiting (default 25 ms). */
  readonly pollMs?: number;
}

export const DEFAULT_STOP_GRACE_MS = 3_000;
const DEFAULT_POLL_MS = 25;

/** Stops that are under way, so a second caller awaits the first instead of signalling again. */
const stopsInFlight = new Map<number, Promise<StopOutcome>>();

/**
 * Stops a whole process group: SIGTERM to the group, a bounded wait until no
 * process of it runs, then SIGKILL to the group and a second bounded wait.
 */
export function stopGroup(pgid: number, options: StopOptions = {}): Promise<StopOutcome> {
  const inFlight = stopsInFlight.get(pgid);
  if (inFlight) return inFlight;
  const stop = runStop(pgid, options).finally(() => stopsInFlight.delete(pgid));
  stopsInFlight.set(pgid, stop);
  return stop;
}

async function runStop(pgid: number, options: StopOptions): Promise<StopOutcome> {
  const graceMs = options.graceMs ?? DEFAULT_STOP_GRACE_MS;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  if (!groupIsAlive(pgid) || signalGroup(pgid, "SIGTERM") === "gone") return "already-gone";
  if (await waitUntilGone(pgid, graceMs, pollMs)) return "exited";
  if (signalGroup(pgid, "SIGKILL") === "gone") return "exited";
  // SIGKILL cannot be refused, but a process in uninterruptible sleep leaves when the kernel lets it.
  await waitUntilGone(pgid, graceMs, pollMs);
  return "killed";
}

async function waitUntilGone(pgid: number, timeoutMs: number, pollMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!groupIsAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())));
  }
}
