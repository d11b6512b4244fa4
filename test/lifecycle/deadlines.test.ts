import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/lifecycle/clock.js";
import { Deadlines } from "../../src/lifecycle/deadlines.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";

/** Deadlines on a virtual clock, with every firing written down as [key, the time it fired] and the timers it set counted. */
function harness() {
  const clock = new VirtualClock(0, 1);
  const fired: Array<[string, number]> = [];
  const timers = { set: 0 };
  const counting: Clock = {
    now: () => clock.now(),
    elapsed: () => clock.elapsed(),
    setTimeout: (callback, delayMs) => {
      timers.set++;
      return clock.setTimeout(callback, delayMs);
    },
  };
  const deadlines = new Deadlines<string>(counting, (key) => fired.push([key, clock.now()]));
  return { clock, fired, deadlines, timers };
}

describe("Deadlines", () => {
  it("fires each key once at its deadline, in deadline order, on one timer", async () => {
    const { clock, fired, deadlines } = harness();
    deadlines.set("c", 30);
    deadlines.set("a", 10);
    deadlines.set("b", 30);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(29);
    expect(fired).toEqual([["a", 10]]);
    await clock.advance(100);
    expect(fired.slice(1).sort()).toEqual([
      ["b", 30],
      ["c", 30],
    ]);
    expect(clock.pendingTimers()).toBe(0);
    expect(deadlines.queued).toBe(0);
    expect(deadlines.tracked).toBe(0);
  });

  it("many keys due at once fire on one wake of the clock", async () => {
    const { clock, fired, deadlines, timers } = harness();
    for (let key = 0; key < 100; key++) deadlines.set(`k${key}`, 50);
    await clock.advance(50);
    expect(fired).toHaveLength(100);
    expect(timers.set).toBe(1);
  });

  it("a deadline moved later fires at the new time only, and keeps the one place it had", async () => {
    const { clock, fired, deadlines } = harness();
    deadlines.set("a", 10);
    deadlines.set("a", 25);
    deadlines.set("a", 40);
    deadlines.set("a", 10);
    deadlines.set("a", 40);
    expect(deadlines.queued).toBe(1);
    await clock.advance(39);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual([["a", 40]]);
  });

  it("a deadline moved earlier fires at the earlier time, once", async () => {
    const { clock, fired, deadlines } = harness();
    deadlines.set("other", 100);
    deadlines.set("a", 50);
    deadlines.set("a", 20);
    await clock.advance(60);
    expect(fired).toEqual([["a", 20]]);
    await clock.advance(100);
    expect(fired).toEqual([
      ["a", 20],
      ["other", 100],
    ]);
  });

  it("a cleared key never fires; when the last is cleared no timer stays armed and no place is kept", async () => {
    const { clock, fired, deadlines } = harness();
    deadlines.set("a", 10);
    deadlines.set("b", 20);
    deadlines.clear("a");
    deadlines.clear("unknown");
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(15);
    expect(fired).toEqual([]);
    deadlines.clear("b");
    deadlines.clear("b");
    expect(clock.pendingTimers()).toBe(0);
    expect(deadlines.queued).toBe(0);
    await clock.advance(100);
    expect(fired).toEqual([]);
    deadlines.set("b", 200);
    await clock.advance(200);
    expect(fired).toEqual([["b", 315]]);
  });

  it("a key set again by its own firing fires again; close stops everything", async () => {
    const clock = new VirtualClock(0, 1);
    const fired: number[] = [];
    const deadlines: Deadlines<string> = new Deadlines(clock, (key) => {
      fired.push(clock.now());
      if (fired.length < 3) deadlines.set(key, 10);
    });
    deadlines.set("a", 10);
    await clock.advance(100);
    expect(fired).toEqual([10, 20, 30]);
    deadlines.set("a", 50);
    deadlines.close();
    expect(clock.pendingTimers()).toBe(0);
    deadlines.set("a", 160);
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(100);
    expect(fired).toEqual([10, 20, 30]);
  });

  it("a key whose onDue throws does not keep the others from firing", async () => {
    const clock = new VirtualClock(0, 1);
    const fired: string[] = [];
    const deadlines = new Deadlines<string>(clock, (key) => {
      fired.push(key);
      if (key === "a") throw new Error("onDue failed");
    });
    deadlines.set("a", 10);
    deadlines.set("b", 10);
    deadlines.set("c", 20);
    await expect(clock.advance(10)).rejects.toThrow("onDue failed");
    await clock.advance(100);
    expect(fired.sort()).toEqual(["a", "b", "c"]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("closed by a key it fires, fires none of the others due with it", async () => {
    const clock = new VirtualClock(0, 1);
    const fired: string[] = [];
    const deadlines: Deadlines<string> = new Deadlines(clock, (key) => {
      fired.push(key);
      deadlines.close();
    });
    deadlines.set("a", 10);
    deadlines.set("b", 10);
    deadlines.set("c", 20);
    await clock.advance(100);
    expect(fired).toHaveLength(1);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("holds one place per key however often its deadline is cleared and set again; a cleared key's goes at its time", async () => {
    const { clock, deadlines } = harness();
    deadlines.set("always", 1_000_000);
    for (let round = 0; round < 100; round++) {
      for (let key = 0; key < 50; key++) {
        deadlines.set(`k${key}`, 500);
        deadlines.clear(`k${key}`);
        deadlines.set(`once-${round}-${key}`, 500);
        deadlines.clear(`once-${round}-${key}`);
      }
      await clock.advance(7);
      expect(deadlines.queued).toBeLessThanOrEqual(51 + 50 * 72);
    }
    await clock.advance(500);
    expect(deadlines.queued).toBe(1);
    expect(deadlines.tracked).toBe(1);
  });

  it("agrees with a model: every key set and not cleared fires once, exactly at its last deadline, in deadline order", async () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant("set" as const), key: fc.integer({ min: 0, max: 5 }), delay: fc.integer({ min: 0, max: 60 }) }),
      fc.record({ op: fc.constant("clear" as const), key: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ op: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 40 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const { clock, fired, deadlines } = harness();
        const model = new Map<string, number>();
        const expected: Array<[string, number]> = [];
        const advanceModel = (to: number) => {
          const due = [...model].filter(([, at]) => at <= to).sort((a, b) => a[1] - b[1]);
          for (const [key, at] of due) {
            model.delete(key);
            expected.push([key, at]);
          }
        };
        for (const s of steps) {
          if (s.op === "set") {
            deadlines.set(`k${s.key}`, s.delay);
            model.set(`k${s.key}`, clock.now() + s.delay);
          } else if (s.op === "clear") {
            deadlines.clear(`k${s.key}`);
            model.delete(`k${s.key}`);
          } else {
            advanceModel(clock.now() + s.ms);
            await clock.advance(s.ms);
          }
          expect(fired.map(([, at]) => at)).toEqual(expected.map(([, at]) => at));
          expect(new Set(fired.map(([key, at]) => `${key}@${at}`))).toEqual(new Set(expected.map(([key, at]) => `${key}@${at}`)));
          expect(clock.pendingTimers()).toBe(model.size === 0 ? 0 : 1);
        }
      }),
      { numRuns: 300 },
    );
  });
});
