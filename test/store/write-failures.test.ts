import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { StoreWriteError } from "../../src/store/errors.js";
import { Store } from "../../src/store/store.js";
import { BatchApplier, StoreBlockedError, type WriteValue } from "../../src/store/write-batch.js";
import { T0, catchError, newSession, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();

function expectWriteError(action: () => unknown, operation: string, code: string): void {
  const error = catchError(action);
  expect(error).toBeInstanceOf(StoreWriteError);
  expect(error).toMatchObject({ operation, code });
  expect((error as Error).message).toContain(`${operation} failed with ${code}`);
}

describe("a write that SQLite refuses", () => {
  it("on a full disk throws SQLITE_FULL and leaves the journal as it was", () => {
    const path = files.path();
    const db = openDatabase(path);
    const store = files.own(Store.fromDatabase(db));
    newSession(store, "s1");
    // Cap the file at its current size plus a few pages: the disk is "full" soon after.
    const pages = db.pragma("page_count", { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 8}`);

    const bulky = { text: "x".repeat(2_000) };
    let stored = 0;
    const error = catchError(() => {
      for (;;) {
        store.events.append("s1", "update", bulky, T0);
        stored++;
      }
    });
    expect(error).toMatchObject({ operation: "events.append", code: "SQLITE_FULL" });
    expect(stored).toBeGreaterThan(0);
    expect(store.events.lastSeq("s1")).toBe(stored);

    expectWriteError(
      () =>
        store.transaction(() => {
          for (let i = 0; i < 50; i++) store.events.append("s1", "update", bulky, T0);
        }),
      "events.append",
      "SQLITE_FULL",
    );
    expectWriteError(
      () => store.sessions.create({ id: "s2", agent: "demo", cwd: "/a", title: "t".repeat(20_000), createdAt: T0 }),
      "sessions.create",
      "SQLITE_FULL",
    );
    store.close();

    const reopened = files.open(path);
    const seqs = reopened.events.read("s1").map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: stored }, (_, i) => i + 1));
    expect(reopened.sessions.get("s2")).toBeUndefined();
    expect(reopened.events.append("s1", "update", {}, T0)).toBe(stored + 1);
  });

  it("on a read-only database throws SQLITE_READONLY for every kind of write and stores nothing", () => {
    const path = files.path();
    const writer = files.open(path);
    newSession(writer, "s1");
    writer.events.append("s1", "prompt", { text: "hello" }, T0);
    writer.questions.ask({ id: "q1", sessionId: "s1", kind: "permission", request: {}, askedAt: T0 });
    writer.close();

    const reader = files.open(path, { readonly: true });
    expect(reader.events.read("s1")).toHaveLength(1);
    const group = { pgid: 4242, kind: "agent", label: "a", startTicks: 1, bootId: "b", startedAt: T0 } as const;
    const writes: [string, () => unknown][] = [
      ["sessions.create", () => newSession(reader, "s2")],
      ["sessions.touch", () => reader.sessions.touch("s1", T0 + 1)],
      ["sessions.delete", () => reader.sessions.delete("s1")],
      ["events.append", () => reader.events.append("s1", "update", {}, T0)],
      ["questions.resolve", () => reader.questions.resolve("q1", "answered", "yes", T0)],
      ["processGroups.add", () => reader.processGroups.add(group)],
      ["lifecycleRecords.append", () => reader.lifecycleRecords.append("child_acquired", {}, T0)],
    ];
    for (const [operation, write] of writes) expectWriteError(write, operation, "SQLITE_READONLY");
    reader.close();

    const after = files.open(path);
    expect(after.sessions.list().map((s) => [s.id, s.updatedAt])).toEqual([["s1", T0]]);
    expect(after.events.read("s1").map((e) => e.payload)).toEqual([{ text: "hello" }]);
    expect(after.questions.get("q1")?.state).toBe("pending");
    expect(after.processGroups.list()).toEqual([]);
    expect(after.lifecycleRecords.recent(10)).toEqual([]);
  });
});

describe("a batch of the host's writer that SQLite cannot write for now", () => {
  const bulky = JSON.stringify({ text: "x".repeat(2_000) });
  const events = (from: number, count: number): WriteValue[] =>
    Array.from({ length: count }, (_, i) => [1, "e", "s1", from + i, "update", bulky, T0]).flat() as WriteValue[];

  it("on a full disk throws StoreBlockedError (SQLITE_FULL) with nothing of it stored; the very same batch is stored once there is room", () => {
    const path = files.path();
    const db = openDatabase(path);
    const store = files.own(Store.fromDatabase(db));
    newSession(store, "s1");
    const applier = new BatchApplier(db);
    const pages = db.pragma("page_count", { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 4}`);
    const batch = events(1, 40);
    const error = catchError(() => applier.apply(batch));
    expect(error).toBeInstanceOf(StoreBlockedError);
    expect(error).toMatchObject({ code: "SQLITE_FULL" });
    expect(store.events.read("s1")).toEqual([]);
    db.pragma("max_page_count = 1073741823");
    expect(applier.apply(batch)).toEqual({ failed: [], results: [] });
    expect(store.events.read("s1").map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it("on a read-only database throws StoreBlockedError (SQLITE_READONLY), never a failed unit", () => {
    const path = files.path();
    newSession(files.open(path), "s1");
    const reader = openDatabase(path, { readonly: true });
    files.own(reader);
    expect(catchError(() => new BatchApplier(reader).apply(events(1, 2)))).toMatchObject({ name: "StoreBlockedError", code: "SQLITE_READONLY" });
  });
});
