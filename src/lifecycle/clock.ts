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
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `callback` once, `delayMs` from now. */
  setTimeout(callback: () => void, delayMs: number): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, delayMs) {
    const handle = setTimeout(callback, Math.max(0, delayMs));
    // Lifecycle timers must never be what keeps the host process alive.
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};
