/** A cancellable timer returned by {@link Clock.setTimeout}. */
export interface Timer {
  cancel(): void;
}

/**
 * The only source of time in the lifecycle kernel. Production code gets
 * {@link systemClock}; tests drive a {@link VirtualClock} so hours pass in
 * milliseconds.
 */
export interface Clock {
  /** Milliseconds since the epoch ({@link monotonicClock}: since an arbitrary start, for durations only). */
  now(): number;
  /**
   * Milliseconds from an arbitrary start that never jump, whatever is done to the wall clock: what deadlines are kept
   * on, as timers count (a step of `now()` moves no deadline).
   */
  elapsed(): number;
  /** Runs `callback` once, `delayMs` from now. */
  setTimeout(callback: () => void, delayMs: number): Timer;
}

/** Node fires longer timeouts at once (after a warning): longer waits are chained. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  elapsed: () => performance.now(),
  setTimeout(callback, delayMs) {
    // Counted on elapsed time, as the timer itself counts: a step of the wall clock moves no chained wait.
    const dueAt = performance.now() + Math.max(0, delayMs);
    let handle: NodeJS.Timeout;
    const arm = () => {
      const wait = dueAt - performance.now();
      handle = setTimeout(wait > MAX_TIMEOUT_MS ? arm : callback, Math.min(Math.max(0, wait), MAX_TIMEOUT_MS));
      // Lifecycle timers must never be what keeps the host process alive.
      handle.unref();
    };
    arm();
    return { cancel: () => clearTimeout(handle) };
  },
};

/**
 * For durations only: `now()` counts milliseconds from an arbitrary start and never goes back, whatever is done to the
 * wall clock (NTP stepping it, an operator setting it). The fleet's heartbeat deadline is measured on it.
 */
export const monotonicClock: Clock = {
  now: () => performance.now(),
  elapsed: () => performance.now(),
  setTimeout: (callback, delayMs) => systemClock.setTimeout(callback, delayMs),
};
