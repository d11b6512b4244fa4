/** How long the host's stop waits for interrupted turns to settle before it stops their agents anyway. */
export const SHUTDOWN_SETTLE_MS = 5_000;

/**
 * The longest `berth serve`'s orderly stop takes with this `stopTimeout`: turns get {@link SHUTDOWN_SETTLE_MS} to
 * settle, agents and what they left `stopTimeout` each, the sweep as much again, with a 10 s margin. Berth gives up on
 * a stuck stop after this, and a supervisor (`berth service`) waits longer than this before it kills.
 */
export function orderlyStopDeadlineMs(stopTimeoutMs: number): number {
  return SHUTDOWN_SETTLE_MS + 3 * stopTimeoutMs + 10_000;
}
