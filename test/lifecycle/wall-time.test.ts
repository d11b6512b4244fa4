import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/lifecycle/clock.js";
import { WallTime } from "../../src/lifecycle/wall-time.js";

/** A clock as the system's reads: `elapsed()` fractional, `now()` whole milliseconds of elapsed time plus a wall offset. */
function systemLikeClock(startElapsed: number, wallOffset: number) {
  let elapsed = startElapsed;
  let offset = wallOffset;
  const clock: Clock = {
    now: () => Math.floor(elapsed + offset),
    elapsed: () => elapsed,
    setTimeout: () => ({ cancel: () => undefined }),
  };
  return {
    clock,
    advance: (ms: number) => (elapsed += ms),
    stepWall: (ms: number) => (offset += ms),
    trueWallOf: (elapsedAt: number) => elapsedAt + offset,
  };
}

describe("WallTime", () => {
  it("reads a deadline the same each time while only the readings' millisecond jitter moves the offset", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e9, noNaN: true }),
        fc.integer({ min: 1.6e12, max: 2e12 }),
        fc.array(fc.double({ min: 0, max: 5_000, noNaN: true }), { minLength: 1, maxLength: 50 }),
        (start, wall, advances) => {
          const c = systemLikeClock(start, wall);
          const wallTime = new WallTime(c.clock);
          const deadline = start + 60_000;
          const first = wallTime.of(deadline);
          for (const ms of advances) {
            c.advance(ms);
            expect(wallTime.of(deadline)).toBe(first);
          }
          // Within the reading's jitter of the moment's wall time, never after it.
          expect(first).toBeLessThanOrEqual(c.trueWallOf(deadline));
          expect(first).toBeGreaterThan(c.trueWallOf(deadline) - 2);
        },
      ),
    );
  });

  it("keeps the offset read when it was made while it moves by 2 ms at most, and takes a move of more", () => {
    let now = 1_700_000_000_000;
    const clock: Clock = { now: () => now, elapsed: () => 100, setTimeout: () => ({ cancel: () => undefined }) };
    const wallTime = new WallTime(clock);
    now += 2;
    expect(wallTime.of(200)).toBe(1_700_000_000_100);
    now += 1;
    expect(wallTime.of(200)).toBe(1_700_000_000_103);
  });

  it("takes a step of the wall clock at the next reading, however small: a view is never behind a clock NTP corrected", () => {
    for (const step of [400, -400, 3, -3, 2 * 3_600_000]) {
      const c = systemLikeClock(1_234.567, 1.7e12);
      const wallTime = new WallTime(c.clock);
      const activeAt = c.clock.elapsed();
      c.advance(10.25);
      c.stepWall(step);
      // The activity's time as the stepped wall clock tells it (a file written then has that time).
      expect(wallTime.of(activeAt)).toBeLessThanOrEqual(c.trueWallOf(activeAt));
      expect(wallTime.of(activeAt)).toBeGreaterThan(c.trueWallOf(activeAt) - 2);
      expect(wallTime.of(activeAt + 3_000) - wallTime.of(activeAt)).toBe(3_000);
    }
  });

  it("tells the times of one view with one offset, so they agree however the wall clock steps between them", () => {
    const c = systemLikeClock(5_000.75, 1.7e12);
    const wallTime = new WallTime(c.clock);
    const view = wallTime.reader();
    const activeAt = view(5_000.75);
    c.stepWall(2.5);
    c.advance(0.5);
    expect(view(5_000.75 + 30_000) - activeAt).toBe(30_000);
    // A reading of its own takes the step.
    expect(wallTime.of(5_000.75)).toBeGreaterThan(activeAt);
    expect(wallTime.of(5_000.75)).toBeLessThanOrEqual(c.trueWallOf(5_000.75));
    expect(wallTime.of(5_000.75)).toBeGreaterThan(c.trueWallOf(5_000.75) - 2);
  });
});
