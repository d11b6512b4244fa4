import { describe, expect, it } from "vitest";
import { JournalWriter, type BatchOutcome, type WriterStatus } from "../../src/store/journal-writer.js";
import type { WriteValue } from "../../src/store/write-batch.js";
import { T0, newSession, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();
/** One unit holding one event. */
const event = (sessionId: string, seq: number): WriteValue[] => [1, "e", sessionId, seq, "update", JSON.stringify({ seq }), T0];
/** One unit holding one store call. */
const call = (name: string, ...args: unknown[]): WriteValue[] => [1, "c", name, JSON.stringify(args), null, null, null];

/** A writer whose outcomes and status changes are collected. */
function startWriter(path: string) {
  const outcomes: BatchOutcome[] = [];
  const statuses: WriterStatus[] = [];
  const lost: string[] = [];
  const writer = new JournalWriter(path, {
    committed: (outcome) => outcomes.push(outcome),
    status: (status) => statuses.push(status),
    threadLost: (error) => lost.push(error),
  });
  /** Waits until every batch written so far has its outcome. */
  const settled = () => expect.poll(() => outcomes.length, { timeout: 10_000 }).toBe(writer.last);
  return { writer, outcomes, statuses, lost, settled };
}

describe("the journal writer thread", () => {
  it("commits batches in order on its own connection; outcomes come in order", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const { writer, outcomes, settled } = startWriter(path);
    for (let batch = 0; batch < 20; batch++) writer.write([...event("a", 2 * batch + 1), ...event("a", 2 * batch + 2)]);
    await settled();
    expect(store.events.read("a").map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(outcomes).toEqual(Array.from({ length: 20 }, (_, i) => ({ batch: i + 1, failed: [], results: [] })));
    await writer.close(5_000);
  });

  it("an outcome is delivered only once its batch is committed: a second connection reads it then", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const reader = files.raw(path, { readonly: true });
    const seen: number[] = [];
    const writer = new JournalWriter(path, {
      committed: () => seen.push((reader.prepare("SELECT count(*) AS n FROM events").get() as { n: number }).n),
    });
    for (let seq = 1; seq <= 50; seq++) writer.write(event("a", seq));
    await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(50);
    expect(seen.every((count, i) => count >= i + 1)).toBe(true);
    await writer.close(5_000);
  });

  it("stores every unit it can: one that cannot be stored fails alone, reported by its index", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const { writer, outcomes, settled } = startWriter(path);
    writer.write([...event("a", 1), ...event("ghost", 1), ...event("a", 2)]);
    writer.write([...event("a", 2), ...event("a", 3)]);
    await settled();
    expect(store.events.read("a").map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(outcomes).toMatchObject([
      { batch: 1, failed: [{ unit: 1, error: expect.stringContaining("SQLITE_CONSTRAINT") }] },
      { batch: 2, failed: [{ unit: 0, error: expect.stringContaining("SQLITE_CONSTRAINT") }] },
    ]);
    await writer.close(5_000);
    expect(() => writer.write(event("a", 4))).toThrow("the journal writer is stopped");
  });

  it("a question and its event are one unit: both or neither", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const { writer, settled } = startWriter(path);
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
    await settled();
    expect(store.questions.listPending("a").map((q) => q.id)).toEqual(["q1"]);
    expect(store.events.read("a").map((e) => (e.payload as { questionId: string }).questionId)).toEqual(["q1"]);
    await writer.close(5_000);
  });

  it("runs the store's rarer writes by name, each unit with its result; an unknown name or bad arguments fail their unit alone", async () => {
    const path = files.path();
    const store = files.open(path);
    const { writer, outcomes, settled } = startWriter(path);
    writer.write([
      ...call("sessions.create", { id: "s", agent: "demo", cwd: "/w", createdAt: T0 }),
      ...[2, "e", "s", 1, "question_asked", "{}", T0, "q", "q1", "s", "permission", "{}", T0],
      ...call("questions.resolve", "q1", "answered", { optionId: "allow" }, T0),
      ...call("questions.resolve", "q1", "cancelled", "too late", T0),
      ...call("sessions.drop"),
      ...call("sessions.setAgentSessionId", "s", ""),
      ...call("sessions.setAgentState", "s", { mode: "code" }),
    ]);
    await settled();
    expect(outcomes).toMatchObject([
      {
        failed: [
          { unit: 4, error: 'unknown store call "sessions.drop"' },
          { unit: 5, error: 'sessions.setAgentSessionId: agentSessionId must be a non-empty string, got ""' },
        ],
        results: [null, undefined, true, false, undefined, undefined, null],
      },
    ]);
    expect(store.questions.get("q1")).toMatchObject({ state: "answered", answer: { optionId: "allow" } });
    expect(store.sessions.get("s")).toMatchObject({ agentSessionId: null, agentState: { mode: "code" } });
    await writer.close(5_000);
  });

  it("while another connection holds the write lock, batches wait in order and nothing is lost; it says blocked once, then writable", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const { writer, outcomes, statuses, settled } = startWriter(path);
    writer.write(event("a", 1));
    await settled();
    const outside = files.raw(path);
    outside.exec("BEGIN IMMEDIATE");
    for (let seq = 2; seq <= 30; seq++) writer.write(event("a", seq));
    await expect.poll(() => statuses.length, { timeout: 10_000 }).toBe(1);
    expect(statuses[0]).toMatchObject({ state: "blocked", code: "SQLITE_BUSY" });
    expect(outcomes).toHaveLength(1);
    outside.exec("ROLLBACK");
    await settled();
    expect(statuses).toMatchObject([{ state: "blocked" }, { state: "writable", since: statuses[0]!.since }]);
    expect(outcomes.map((outcome) => [outcome.batch, outcome.failed])).toEqual(Array.from({ length: 30 }, (_, i) => [i + 1, []]));
    expect(store.events.read("a").map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    await writer.close(5_000);
  });

  it("closing while the store cannot write waits only as long as it is told, and reports the batches it could not store as failed", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const { writer, outcomes, statuses } = startWriter(path);
    const outside = files.raw(path);
    outside.exec("BEGIN IMMEDIATE");
    writer.write(event("a", 1));
    writer.write(event("a", 2));
    await expect.poll(() => statuses.length, { timeout: 10_000 }).toBe(1);
    await writer.close(300);
    expect(outcomes).toEqual([
      { batch: 1, failed: [{ unit: -1, error: "not stored: the host stopped while the store could not write" }] },
      { batch: 2, failed: [{ unit: -1, error: "not stored: the host stopped while the store could not write" }] },
    ]);
    outside.exec("ROLLBACK");
    expect(store.events.read("a")).toEqual([]);
  });
});

describe("the journal writer when its thread dies", () => {
  it("reports what was in flight as failed, never as stored, and a new thread takes over", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const { writer, outcomes, lost, settled } = startWriter(path);
    writer.write(event("a", 1));
    await settled();
    const worker = () => (writer as unknown as { worker: { terminate(): Promise<number>; once(e: string, f: () => void): void } }).worker;
    const exited = new Promise<void>((resolve) => worker().once("exit", resolve));
    await worker().terminate();
    await exited;
    writer.write([...event("a", 2), ...event("a", 3)]);
    await settled();
    expect(store.events.read("a").map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(lost).toEqual([expect.stringContaining("a new writer thread took over")]);
    expect(outcomes.map((outcome) => [outcome.batch, outcome.failed])).toEqual([
      [1, []],
      [2, []],
    ]);
    await writer.close(5_000);
  });
});
