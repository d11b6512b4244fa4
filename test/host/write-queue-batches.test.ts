// How the write queue groups units into the writer's batches (group commit): a writer that records what it is handed
// and commits only when the test says, so what waits while batches are in flight can be seen.
import { describe, expect, it } from "vitest";
import { WriteQueue } from "../../src/host/write-queue.js";
import type { BatchWriter, WriterListeners } from "../../src/store/journal-writer.js";
import { unitsOf, type WriteOp, type WriteValue } from "../../src/store/write-batch.js";
import { capturingLogger } from "../support/capturing-logger.js";

/** A writer that keeps each batch handed to it until `commit()` reports the oldest committed. */
class HeldWriter implements BatchWriter {
  readonly batches: WriteValue[][] = [];
  private committedCount = 0;
  private closed = false;
  last = 0;

  constructor(private readonly listeners: WriterListeners) {}

  write(values: WriteValue[]): number {
    if (this.closed) throw new Error("the writer is stopped");
    this.batches.push(values);
    return ++this.last;
  }

  /** The oldest batch not committed yet is committed. */
  commit(): void {
    const batch = ++this.committedCount;
    this.listeners.committed({ batch, failed: [], results: [] });
  }

  get inFlight(): number {
    return this.last - this.committedCount;
  }

  /** Stops once `finishClose()` is called (as a writer waits for its thread): from now on batches are refused; then what is in flight is reported failed. */
  close(): Promise<number> {
    this.closed = true;
    return new Promise((resolve) => {
      this.finishClose = () => {
        const lost = this.inFlight;
        while (this.inFlight > 0) this.listeners.committed({ batch: ++this.committedCount, failed: [{ unit: -1, error: "not stored" }] });
        resolve(lost);
      };
    });
  }

  finishClose: () => void = () => undefined;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const op = (name: string): WriteOp => ["c", name, null, null, null, null];
const names = (values: readonly WriteValue[]) => unitsOf(values).map((ops) => ops[0]![1]);

function queueWithHeldWriter() {
  let writer: HeldWriter | undefined;
  const { log, lines } = capturingLogger();
  const queue = new WriteQueue(
    (listeners) => {
      writer = new HeldWriter(listeners);
      return writer;
    },
    log,
    10_000,
    64 * 1024 * 1024,
  );
  const stored: string[] = [];
  const add = (name: string) => queue.unit([op(name)], { sessionId: null, events: 1 }, { stored: () => stored.push(name) });
  return { queue, writer: writer!, stored, add, lines };
}

describe("the write queue's batches", () => {
  it("with two batches in flight, what arrives waits and goes as one batch once one is committed; every unit is stored once, in order", async () => {
    const { writer, stored, add } = queueWithHeldWriter();
    add("a");
    add("b");
    await turn();
    add("c");
    await turn();
    expect(writer.batches.map(names)).toEqual([["a", "b"], ["c"]]);
    // Both in flight: units of later turns gather.
    for (const name of ["d", "e", "f"]) {
      add(name);
      await turn();
    }
    expect(writer.batches).toHaveLength(2);
    writer.commit();
    expect(stored).toEqual(["a", "b"]);
    await turn();
    expect(writer.batches.map(names)).toEqual([["a", "b"], ["c"], ["d", "e", "f"]]);
    writer.commit();
    writer.commit();
    expect(stored).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(writer.inFlight).toBe(0);
  });

  it("a batch is handed at 4,096 units even while two are in flight, so none grows without bound", async () => {
    const { writer, add } = queueWithHeldWriter();
    add("first");
    await turn();
    add("second");
    await turn();
    for (let i = 0; i < 4_096 + 10; i++) add(`u${i}`);
    await turn();
    expect(writer.batches.map((values) => unitsOf(values).length)).toEqual([1, 1, 4_106]);
  });

  it("work waiting for what is queued runs after it is committed, also while it waits for a batch in flight", async () => {
    const { queue, writer, stored, add } = queueWithHeldWriter();
    add("a");
    await turn();
    add("b");
    await turn();
    add("c");
    queue.afterCommit(() => stored.push("after c"));
    await turn();
    writer.commit();
    writer.commit();
    expect(stored).toEqual(["a", "b"]);
    await turn();
    writer.commit();
    expect(stored).toEqual(["a", "b", "c", "after c"]);
  });

  it("handQueued hands what waits at once, while two batches are in flight: what is asked of the writer next comes after it", async () => {
    const { queue, writer, add } = queueWithHeldWriter();
    add("a");
    await turn();
    add("b");
    await turn();
    add("c");
    add("d");
    queue.handQueued();
    expect(writer.batches.map(names)).toEqual([["a"], ["b"], ["c", "d"]]);
    // Nothing waits: a second call hands nothing.
    queue.handQueued();
    expect(writer.batches).toHaveLength(3);
  });

  it("a write queued while the host stops, with two batches in flight, is refused and counted in the stop's line", async () => {
    const { queue, writer, add, lines } = queueWithHeldWriter();
    const refused: string[] = [];
    add("a");
    await turn();
    add("b");
    await turn();
    const closing = queue.close(1_000);
    queue.unit([op("late")], { sessionId: null, events: 1 }, { refused: () => refused.push("late") });
    await turn();
    writer.finishClose();
    await closing;
    expect(refused).toEqual(["late"]);
    expect(lines.filter((line) => line.msg === "writes not stored before the host stopped").map((line) => line.writes)).toEqual([3]);
  });
});
