import type { Clock } from "./clock.js";

/**
 * How far the clocks' offset may move before it is read afresh: more than a reading's own jitter (`now()` is whole
 * milliseconds, `elapsed()` is not, so two readings of an unchanged offset differ by up to a millisecond), and far less
 * than the steps a wall clock takes (NTP corrects a booting machine's clock by hundreds of milliseconds).
 */
const OFFSET_TOLERANCE_MS = 2;

/**
 * Tells an `elapsed()` time (what deadlines are kept on) in wall-clock milliseconds, for views and records. The two
 * clocks' offset is kept while it moves by no more than a reading's jitter, so a deadline reads the same each time it
 * is asked; a step of the wall clock beyond it, however small, is taken at the next reading.
 */
export class WallTime {
  private offset: number;

  constructor(private readonly clock: Clock) {
    this.offset = clock.now() - clock.elapsed();
  }

  /** `elapsedAt` in wall-clock milliseconds. */
  of(elapsedAt: number): number {
    return this.reader()(elapsedAt);
  }

  /** Tells the times of one view: the offset is checked once, so they agree with each other (a deadline minus its start is its duration). */
  reader(): (elapsedAt: number) => number {
    const offset = this.current();
    return (elapsedAt) => Math.floor(elapsedAt + offset);
  }

  /**
   * The offset, read afresh if it moved by more than the tolerance. Floored with it, a time is never later than the wall
   * clock's own reading of that moment (`now()` is whole milliseconds, read first), give or take a step within the tolerance.
   */
  private current(): number {
    const offset = this.clock.now() - this.clock.elapsed();
    if (Math.abs(offset - this.offset) > OFFSET_TOLERANCE_MS) this.offset = offset;
    return this.offset;
  }
}
