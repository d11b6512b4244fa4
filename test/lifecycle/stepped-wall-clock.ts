import type { Clock } from "../../src/lifecycle/clock.js";
import type { VirtualClock } from "../../src/lifecycle/virtual-clock.js";

/**
 * A kernel's clock on `clock`'s virtual time whose wall clock (`now()`) can be stepped, as NTP or a resumed machine
 * steps it; elapsed time and timers go on as they were.
 */
export function steppedWallClock(clock: VirtualClock) {
  let offset = 0;
  const kernelClock: Clock = {
    now: () => clock.now() + offset,
    elapsed: () => clock.elapsed(),
    setTimeout: (callback, delayMs) => clock.setTimeout(callback, delayMs),
  };
  return {
    kernelClock,
    /** The wall clock's time as the kernel reads it. */
    wallNow: () => clock.now() + offset,
    /** Steps the wall clock by `ms`. */
    stepWall(ms: number): void {
      offset += ms;
    },
  };
}
