import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KeyedSlots, type FreeSlot } from "../../src/host/keyed-slots.js";

/** Takes a slot and notes when it was granted; settles with the free function or the rejection. */
function track(slots: KeyedSlots, key: string, signal?: AbortSignal) {
  const taken: { free?: FreeSlot; error?: unknown } = {};
  const done = slots.take(key, signal).then(
    (free) => {
      taken.free = free;
    },
    (error: unknown) => {
      taken.error = error;
    },
  );
  return { taken, done };
}

describe("KeyedSlots", () => {
  it("grants `size` slots per key at once; the next waits until one is freed, in the order asked", async () => {
    const slots = new KeyedSlots(2);
    const a = track(slots, "k");
    const b = track(slots, "k");
    const c = track(slots, "k");
    const d = track(slots, "k");
    const other = track(slots, "other");
    await Promise.all([a.done, b.done, other.done]);
    expect(slots.count("k")).toEqual({ holding: 2, waiting: 2 });
    expect(other.taken.free).toBeDefined();
    expect(c.taken.free).toBeUndefined();

    a.taken.free?.();
    await c.done;
    expect(c.taken.free).toBeDefined();
    expect(d.taken.free).toBeUndefined();
    expect(slots.count("k")).toEqual({ holding: 2, waiting: 1 });

    // Freeing twice gives back one slot only.
    a.taken.free?.();
    expect(slots.count("k")).toEqual({ holding: 2, waiting: 1 });
    b.taken.free?.();
    await d.done;
    c.taken.free?.();
    d.taken.free?.();
    expect(slots.count("k")).toEqual({ holding: 0, waiting: 0 });
  });

  it("a waiter whose signal aborts leaves the queue with the signal's reason and takes no slot", async () => {
    const slots = new KeyedSlots(1);
    const first = track(slots, "k");
    await first.done;
    const giveUp = new AbortController();
    const quitter = track(slots, "k", giveUp.signal);
    const patient = track(slots, "k");
    giveUp.abort(new Error("the client left"));
    await quitter.done;
    expect(quitter.taken.error).toEqual(new Error("the client left"));
    expect(slots.count("k")).toEqual({ holding: 1, waiting: 1 });
    first.taken.free?.();
    await patient.done;
    expect(patient.taken.free).toBeDefined();
    // An already aborted signal is refused at once.
    await expect(slots.take("k", AbortSignal.abort(new Error("gone")))).rejects.toThrow("gone");
  });

  it("refuses a size that is not a whole number of at least 1", () => {
    expect(() => new KeyedSlots(0)).toThrow("slots per key must be a whole number of at least 1, not 0");
    expect(() => new KeyedSlots(1.5)).toThrow(RangeError);
  });

  it("never holds more than `size` per key, and every taker gets its slot once all are freed (any order of takes, frees, aborts)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.oneof(fc.constant({ op: "take" as const }), fc.constant({ op: "free" as const }), fc.constant({ op: "abort" as const })), {
          maxLength: 40,
        }),
        async (size, ops) => {
          const slots = new KeyedSlots(size);
          const held: FreeSlot[] = [];
          const waiting: { controller: AbortController; settled: Promise<void> }[] = [];
          let granted = 0;
          let takes = 0;
          let aborted = 0;
          for (const { op } of ops) {
            if (op === "take") {
              takes++;
              const controller = new AbortController();
              const settled = slots.take("k", controller.signal).then(
                (free) => {
                  granted++;
                  held.push(free);
                },
                () => {
                  aborted++;
                },
              );
              waiting.push({ controller, settled });
            } else if (op === "free") {
              held.shift()?.();
            } else {
              waiting.at(-1)?.controller.abort(new Error("gave up"));
            }
            await Promise.resolve();
            await Promise.resolve();
            expect(slots.count("k").holding).toBeLessThanOrEqual(size);
            expect(slots.count("k").holding).toBe(held.length);
          }
          // Free everything as it is granted: every take ends granted or aborted.
          while (granted + aborted < takes) {
            held.shift()?.();
            await new Promise((resolve) => setImmediate(resolve));
          }
          for (const free of held.splice(0)) free();
          expect(slots.count("k")).toEqual({ holding: 0, waiting: 0 });
        },
      ),
    );
  });
});
