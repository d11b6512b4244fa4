import { describe, expect, it } from "vitest";
import { JournalWriter, type JournalWriteFailure } from "../../src/store/journal-writer.js";
import { waitUntil } from "../support/process-table.js";
import { T0, newSession, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();
const event = (sessionId: string, seq: number) => ({ sessionId, seq, kind: "update", payload: { seq }, at: T0 });

describe("the journal writer thread", () => {
  it("stores batches in order on its own connection; sync makes them readable", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const writer = new JournalWriter(path, () => undefined, (batch) => store.events.appendSequenced(batch));
    for (let batch = 0; batch < 20; batch++) writer.write([event("a", 2 * batch + 1), event("a", 2 * batch + 2)]);
    writer.sync();
    expect(store.events.read("a").map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    await writer.close();
  });

  it("reports a batch that cannot be stored, stores none of it, and goes on with the next", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const failures: JournalWriteFailure[] = [];
    const writer = new JournalWriter(path, (failure) => failures.push(failure), (batch) => store.events.appendSequenced(batch));
    writer.write([event("a", 1), event("ghost", 1)]);
    writer.write([event("a", 1), event("a", 2)]);
    writer.sync();
    expect(store.events.read("a").map((e) => e.seq)).toEqual([1, 2]);
    // The thread's messages are all delivered before it exits: every failure is in by then.
    await writer.close();
    expect(failures).toMatchObject([{ events: 2, sessionIds: ["a", "ghost"], error: expect.stringContaining("SQLITE_CONSTRAINT") }]);
    expect(() => writer.write([event("a", 3)])).toThrow("the journal writer is stopped");
  });
});

describe("the journal writer when its thread dies", () => {
  it("writes on the caller's thread from then on, losing nothing later", async () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "a");
    const failures: JournalWriteFailure[] = [];
    const writer = new JournalWriter(path, (failure) => failures.push(failure), (batch) => store.events.appendSequenced(batch));
    writer.write([event("a", 1)]);
    writer.sync();
    await (writer as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await waitUntil(() => failures.length > 0, "the writer notices its thread is gone");
    writer.write([event("a", 2), event("a", 3)]);
    writer.sync();
    expect(store.events.read("a").map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(failures).toMatchObject([{ error: expect.stringContaining("writing on the main thread"), events: 0 }]);
    await writer.close();
  });
});
