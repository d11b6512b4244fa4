import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { attemptStarted, connected, lostConnection, lostSince, reconnectDelay, type Reconnection } from "../../web/src/live/reconnection.js";

const middle = (): number => 0.5;

/** Berth stays down from `start`: every attempt fails at once. The times attempts start, up to `until`. */
function attemptsWhileDown(until: number, random: () => number): number[] {
  const times: number[] = [];
  let state: Reconnection = lostConnection(connected, "lost", 0, random);
  while (state.name === "waiting" && state.retryAt <= until) {
    const at = state.retryAt;
    times.push(at);
    state = lostConnection(attemptStarted(state), "refused", at, random);
  }
  return times;
}

describe("reconnecting to Berth", () => {
  it("waits 0.5 s, then twice as long after each failed attempt, up to 15 s", () => {
    let state: Reconnection = connected;
    const delays: number[] = [];
    for (let now = 0, i = 0; i < 8; i++) {
      const waiting = lostConnection(state, "refused", now, middle);
      delays.push(waiting.retryAt - now);
      expect(waiting.attempt).toBe(i + 1);
      now = waiting.retryAt;
      state = attemptStarted(waiting);
    }
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000]);
  });

  it("starts again from 0.5 s only after an attempt that really worked", () => {
    const failed = lostConnection(attemptStarted(lostConnection(connected, "lost", 0, middle)), "refused", 500, middle);
    expect(failed).toMatchObject({ attempt: 2, retryAt: 1_500 });
    // Trying is not having reached Berth: a failure of the attempt under way counts on.
    expect(lostConnection(attemptStarted(failed), "refused", 1_500, middle)).toMatchObject({ attempt: 3, retryAt: 3_500 });
    expect(lostConnection(connected, "lost again", 10_000, middle)).toMatchObject({ attempt: 1, retryAt: 10_500, since: 10_000 });
  });

  it("counts one loss told twice (the socket's close, its request's failure) once", () => {
    const waiting = lostConnection(connected, "socket closed", 0, middle);
    expect(lostConnection(waiting, "request failed", 100, middle)).toBe(waiting);
  });

  it("keeps when Berth was last reached through every failed attempt", () => {
    expect(lostSince(connected)).toBeNull();
    const first = lostConnection(connected, "lost", 1_000, middle);
    const later = lostConnection(attemptStarted(lostConnection(attemptStarted(first), "refused", 1_500, middle)), "refused", 2_500, middle);
    expect(lostSince(attemptStarted(later))).toBe(1_000);
    expect(later.reason).toBe("refused");
  });

  it("makes at most 8 attempts in 25 s with Berth down, whatever the jitter", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 20, maxLength: 20 }), (draws) => {
        let next = 0;
        const times = attemptsWhileDown(25_000, () => draws[next++ % draws.length]!);
        expect(times.length).toBeLessThanOrEqual(8);
        expect(times.length).toBeGreaterThanOrEqual(5);
      }),
    );
  });

  it("spreads each delay ±20 % around its step", () => {
    expect(reconnectDelay(1, () => 0)).toBe(400);
    expect(reconnectDelay(1, () => 1)).toBe(600);
    expect(reconnectDelay(20, () => 1)).toBe(18_000);
  });
});
