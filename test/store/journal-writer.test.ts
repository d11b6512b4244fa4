import { describe, expect, it } from "vitest";
import { JournalWriter, type BatchOutcome } from "../../src/store/journal-writer.js";
import type { WriteValue } from "../../src/store/write-batch.js";
import { T0, newSession, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();
/** One unit holding one event. */
const event = (sessionId: string, seq: number): WriteValue[] => [1, "e", sessionId, seq, "update", JSON.stringify({ seq }), T0];

describe("the journal writer thread", () => {
  it("commits batches in order on its own connection; outcomes come in order; sync makes them readable", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const outcomes: BatchOutcome[] = [];
    const writer = new JournalWriter(
      path,
      (outcome) => outcomes.push(outcome),
      (values) => store.batches.apply(values),
    );
    for (let batch = 0; batch < 20; batch++) writer.write([...event("a", 2 * batch + 1), ...event("a", 2 * batch + 2)]);
    writer.sync();
    expect(store.events.read("a").map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(outcomes).toEqual(Array.from({ length: 20 }, (_, i) => ({ batch: i + 1, failed: [] })));
    await writer.close();
  });

  it("an outcome is delivered only once its batch is committed: a second connection reads it then", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const reader = files.raw(path, { readonly: true });
    const seen: number[] = [];
    const writer = new JournalWriter(
      path,
      () => seen.push((reader.prepare("SELECT count(*) AS n FROM events").get() as { n: number }).n),
      (values) => store.batches.apply(values),
    );
    for (let seq = 1; seq <= 50; seq++) writer.write(event("a", seq));
    await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(50);
    expect(seen.every((count, i) => count >= i + 1)).toBe(true);
    await writer.close();
  });

  it("stores every unit it can: one that cannot be stored fails alone, reported by its index", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const outcomes: BatchOutcome[] = [];
    const writer = new JournalWriter(
      path,
      (outcome) => outcomes.push(outcome),
      (values) => store.batches.apply(values),
    );
    writer.write([...event("a", 1), ...event("ghost", 1), ...event("a", 2)]);
    writer.write([...event("a", 2), ...event("a", 3)]);
    writer.sync();
    expect(store.events.read("a").map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(outcomes).toMatchObject([
      { batch: 1, failed: [{ unit: 1, error: expect.stringContaining("SQLITE_CONSTRAINT") }] },
      { batch: 2, failed: [{ unit: 0, error: expect.stringContaining("SQLITE_CONSTRAINT") }] },
    ]);
    await writer.close();
    expect(() => writer.write(event("a", 4))).toThrow("the journal writer is stopped");
  });

  it("a question and its event are one unit: both or neither", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const writer = new JournalWriter(
      path,
      () => undefined,
      (values) => store.batches.apply(values),
    );
    const asked = (sessionId: string, id: string, seq: number): WriteValue[] => [
      2,
      "e",
      sessionId,
      seq,
      "question_asked",
      JSON.stringify({ questionId: id }),
      T0,
      "q",
      id,
      sessionId,
      "permission",
      "{}",
      T0,
    ];
    // The event of the second unit takes a seq already used: its question must not be stored either.
    writer.write([...asked("a", "q1", 1), ...asked("a", "q2", 1)]);
    writer.sync();
    expect(store.questions.listPending("a").map((q) => q.id)).toEqual(["q1"]);
    expect(store.events.read("a").map((e) => (e.payload as { questionId: string }).questionId)).toEqual(["q1"]);
    await writer.close();
  });
});

describe("the journal writer when its thread dies", () => {
  it("reports what was in flight as failed, never as stored, and writes on the caller's thread from then on", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const outcomes: BatchOutcome[] = [];
    const lost: string[] = [];
    const writer = new JournalWriter(
      path,
      (outcome) => outcomes.push(outcome),
      (values) => store.batches.apply(values),
      (error) => lost.push(error),
    );
    writer.write(event("a", 1));
    writer.sync();
    const exited = new Promise((resolve) =>
      (writer as unknown as { worker: { once(e: string, f: (value: unknown) => void): void } }).worker.once("exit", resolve),
    );
    await (writer as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await exited;
    writer.write([...event("a", 2), ...event("a", 3)]);
    writer.sync();
    expect(store.events.read("a").map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(lost).toEqual([expect.stringContaining("writing on the main thread")]);
    expect(outcomes.map((outcome) => outcome.batch)).toEqual([1, 2]);
    await writer.close();
  });
});
