import type { Clock } from "./clock.js";

/**
 * Tells an `elapsed()` time (what deadlines are kept on) in wall-clock milliseconds, for views and records. The two
 * clocks' offset is read afresh only once it moved by over a second (a step of the wall clock), so a deadline reads the
 * same each time it is asked.
 */
export class WallTime {
  private offset: number;

  constructor(private readonly clock: Clock) {
    this.offset = clock.now() - clock.elapsed();
  }

  of(elapsedAt: number): number {
    const offset = this.clock.now() - this.clock.elapsed();
    if (Math.abs(offset - this.offset) > 1_000) this.offset = offset;
    // Never later than the wall clock's own reading of that moment (`now()` is whole milliseconds, read first).
    return Math.floor(elapsedAt + this.offset);
  }
}
