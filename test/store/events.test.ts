import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StoreInputError, StoreNotFoundError } from "../../src/store/errors.js";
import type { Store } from "../../src/store/store.js";
import { T0, newSession, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();

function seqs(store: Store, sessionId: string): number[] {
  return store.events.read(sessionId).map((e) => e.seq);
}

describe("the journal", () => {
  it("appends pre-sequenced batches all or nothing: a taken seq or an unknown session stores none of the batch", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    newSession(store, "b");
    store.events.appendSequenced([
      { sessionId: "a", seq: 1, kind: "turn_started", payload: {}, at: T0 },
      { sessionId: "b", seq: 1, kind: "turn_started", payload: {}, at: T0 },
      { sessionId: "a", seq: 2, kind: "update", payload: { n: 1 }, at: T0 },
    ]);
    expect(seqs(store, "a")).toEqual([1, 2]);
    expect(() =>
      store.events.appendSequenced([
        { sessionId: "a", seq: 3, kind: "update", payload: {}, at: T0 },
        { sessionId: "b", seq: 1, kind: "update", payload: {}, at: T0 },
      ]),
    ).toThrow(/events.appendSequenced failed with SQLITE_CONSTRAINT/);
    expect(() => store.events.appendSequenced([{ sessionId: "ghost", seq: 1, kind: "update", payload: {}, at: T0 }])).toThrow(/SQLITE_CONSTRAINT/);
    expect(seqs(store, "a")).toEqual([1, 2]);
    expect(seqs(store, "b")).toEqual([1]);
    expect(store.events.append("a", "turn_ended", {}, T0)).toBe(3);
  });

  it("numbers each session's events 1, 2, 3... independently of other sessions", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    newSession(store, "b");
    const got = [
      store.events.append("a", "turn_started", {}, T0),
      store.events.append("b", "turn_started", {}, T0),
      store.events.append("a", "update", { n: 1 }, T0),
      store.events.append("a", "turn_ended", {}, T0),
      store.events.append("b", "update", { n: 1 }, T0),
    ];
    expect(got).toEqual([1, 1, 2, 3, 2]);
    expect(seqs(store, "a")).toEqual([1, 2, 3]);
    expect(store.events.lastSeq("a")).toBe(3);
    expect(store.events.lastSeq("b")).toBe(2);
  });

  it("continues the numbering after a re-open", () => {
    const path = files.path();
    const first = files.open(path);
    newSession(first, "a");
    first.events.append("a", "prompt", {}, T0);
    first.events.append("a", "update", {}, T0);
    first.close();

    const second = files.open(path);
    expect(second.events.lastSeq("a")).toBe(2);
    expect(second.events.append("a", "update", {}, T0)).toBe(3);
    expect(seqs(second, "a")).toEqual([1, 2, 3]);
  });

  it("stores kind, payload and time exactly, leaving the session's updatedAt to the caller", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    const payload = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "héllo ✓" }, list: [1, null, true] };
    store.events.append("a", "update", payload, T0 + 500);
    expect(store.events.read("a")).toEqual([{ sessionId: "a", seq: 1, kind: "update", payload, at: T0 + 500 }]);
    expect(store.sessions.get("a")?.updatedAt).toBe(T0);
  });

  it("reads an update stored as an agent's whole line, with or without its jsonrpc, as { update, _meta? }", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "old row" } };
    store.events.append("a", "update", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "x", update, _meta: { m: 1 } } }, T0);
    store.events.append("a", "update", { method: "session/update", params: { sessionId: "x", update } }, T0);
    store.events.append("a", "update", { update, _meta: { n: 2 } }, T0);
    expect(store.events.read("a").map((event) => event.payload)).toEqual([{ update, _meta: { m: 1 } }, { update }, { update, _meta: { n: 2 } }]);
    expect(store.events.lastWords("a")).toMatchObject({ role: "agent", text: "old rowold rowold row" });
  });

  it("shows a session's preview and last turn whatever an event nests deeper than SQLite's JSON reads (1,000)", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    const deep = JSON.parse(`${"[".repeat(1_100)}${"]".repeat(1_100)}`) as unknown;
    store.events.append("a", "update", { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "the answer" } } }, T0);
    store.events.append("a", "update", { update: { sessionUpdate: "tool_call", toolCallId: "t", rawInput: deep } }, T0 + 1);
    store.events.append("a", "turn_ended", { stopReason: "end_turn", error: null, _meta: deep }, T0 + 2);
    expect(store.events.lastWords("a")).toEqual({ role: "agent", text: "the answer", at: T0 });
    // Its fields cannot be read there: a turn that ended, its stop reason unknown.
    expect(store.events.lastOutcome("a")).toEqual({ outcome: "completed", reason: null, at: T0 + 2 });
    expect(store.events.read("a")[1]!.payload).toEqual({ update: { sessionUpdate: "tool_call", toolCallId: "t", rawInput: deep } });
  });

  it("reads a window with after and limit", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    for (let i = 1; i <= 10; i++) store.events.append("a", "update", { i }, T0 + i);
    expect(store.events.read("a", { after: 3, limit: 4 }).map((e) => e.seq)).toEqual([4, 5, 6, 7]);
    expect(store.events.read("a", { after: 8 }).map((e) => e.seq)).toEqual([9, 10]);
    expect(store.events.read("a", { limit: 2 }).map((e) => e.seq)).toEqual([1, 2]);
    expect(store.events.read("a", { after: 10 })).toEqual([]);
    expect(store.events.read("a", { limit: 0 })).toEqual([]);
    expect(() => store.events.read("a", { after: -1 })).toThrow("events.read: after must be a non-negative integer, got -1");
  });

  it("replays page by page, in order, from the start or after a seq", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    store.transaction(() => {
      for (let i = 1; i <= 2_345; i++) store.events.append("a", "update", { i }, T0);
    });
    const all = [...store.events.replay("a", { pageSize: 100 })];
    expect(all.map((e) => e.seq)).toEqual(range(1, 2_345));
    expect(all.every((e) => (e.payload as { i: number }).i === e.seq)).toBe(true);
    expect([...store.events.replay("a", { after: 2_300, pageSize: 7 })].map((e) => e.seq)).toEqual(range(2_301, 2_345));
    expect([...store.events.replay("a", { pageSize: 2_345 })]).toHaveLength(2_345);
  });

  it("lets the journal be appended to while a replay is in progress", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    for (let i = 0; i < 5; i++) store.events.append("a", "update", {}, T0);
    const seen: number[] = [];
    for (const event of store.events.replay("a", { pageSize: 2 })) {
      seen.push(event.seq);
      // An open SQLite cursor would make this write fail with "connection is busy".
      if (event.seq <= 3) store.events.append("a", "update", { during: event.seq }, T0);
    }
    expect(seen).toEqual(range(1, 8));
  });

  it("refuses an unknown session and a bad payload, without consuming a seq", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    expect(() => store.events.append("ghost", "update", {}, T0)).toThrow('events.append: no session with id "ghost"');
    expect(() => store.events.read("ghost")).toThrow(StoreNotFoundError);
    expect(() => store.events.replay("ghost")).toThrow(StoreNotFoundError);
    expect(() => store.events.lastSeq("ghost")).toThrow(StoreNotFoundError);

    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => store.events.append("a", "update", undefined, T0)).toThrow("events.append: payload is not JSON-serializable");
    expect(() => store.events.append("a", "update", circular, T0)).toThrow(StoreInputError);
    expect(() => store.events.append("a", "update", { n: 1n }, T0)).toThrow(/payload is not JSON-serializable: .*BigInt/);
    expect(() => store.events.append("a", "", {}, T0)).toThrow("events.append: kind must be a non-empty string");
    expect(() => store.events.replay("a", { pageSize: 0 })).toThrow("events.replay: pageSize must be at least 1");
    expect(store.events.append("a", "update", {}, T0)).toBe(1);
  });

  it("makes several appends atomic in one transaction: all stored, or none and no seq consumed", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    expect(store.transaction(() => [1, 2, 3].map((i) => store.events.append("a", "update", { i }, T0)))).toEqual([1, 2, 3]);

    expect(() =>
      store.transaction(() => {
        store.events.append("a", "update", { i: 4 }, T0);
        store.events.append("a", "update", { i: 5 }, T0);
        throw new Error("the turn blew up");
      }),
    ).toThrow("the turn blew up");
    expect(seqs(store, "a")).toEqual([1, 2, 3]);
    expect(store.events.append("a", "update", {}, T0)).toBe(4);
  });

  it("refuses asynchronous transaction work", () => {
    const store = files.open(files.path());
    newSession(store, "a");
    expect(() => store.transaction(async () => store.events.append("a", "update", {}, T0))).toThrow("store.transaction: work must be synchronous");
    expect(store.events.lastSeq("a")).toBe(0);
  });

  it("keeps every session's seqs gap-free over any mix of appends, failed batches and re-opens", () => {
    const sessions = ["a", "b", "c"] as const;
    const step = fc.oneof(
      fc.record({ type: fc.constant("append" as const), session: fc.constantFrom(...sessions) }),
      fc.record({
        type: fc.constant("batch" as const),
        session: fc.constantFrom(...sessions),
        size: fc.integer({ min: 1, max: 5 }),
        fails: fc.boolean(),
      }),
      fc.record({ type: fc.constant("reopen" as const) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const path = files.path();
        let store = files.open(path);
        for (const id of sessions) newSession(store, id);
        const model = new Map<string, number>(sessions.map((id) => [id, 0]));
        for (const s of steps) {
          if (s.type === "reopen") {
            store.close();
            store = files.open(path);
          } else if (s.type === "append") {
            const expected = model.get(s.session)! + 1;
            expect(store.events.append(s.session, "update", {}, T0)).toBe(expected);
            model.set(s.session, expected);
          } else {
            const work = () => {
              for (let i = 0; i < s.size; i++) store.events.append(s.session, "update", {}, T0);
              if (s.fails) throw new Error("rolled back");
            };
            if (s.fails) expect(() => store.transaction(work)).toThrow("rolled back");
            else {
              store.transaction(work);
              model.set(s.session, model.get(s.session)! + s.size);
            }
          }
        }
        for (const id of sessions) {
          expect(seqs(store, id)).toEqual(range(1, model.get(id)!));
          expect(store.events.lastSeq(id)).toBe(model.get(id));
        }
        store.close();
      }),
      { numRuns: 40 },
    );
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
