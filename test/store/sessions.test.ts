import { describe, expect, it } from "vitest";
import { StoreInputError, StoreNotFoundError, StoreWriteError } from "../../src/store/errors.js";
import { T0, catchError, newSession, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();

describe("sessions", () => {
  it("round-trip through a re-open, with nullable fields defaulting to null", () => {
    const path = files.path();
    const store = files.open(path);
    const created = store.sessions.create({ id: "s1", agent: "demo", cwd: "/work/a", createdAt: T0 });
    expect(created).toEqual({
      id: "s1",
      agent: "demo",
      cwd: "/work/a",
      workspace: null,
      title: null,
      agentSessionId: null,
      agentRequest: null,
      agentState: null,
      worktree: null,
      createdAt: T0,
      updatedAt: T0,
    });
    const agentRequest = { newSession: { mcpServers: [], _meta: { "x/y": 1 } } };
    store.sessions.create({
      id: "s2",
      agent: "claude",
      cwd: "/work/a",
      workspace: "ws",
      title: "fix",
      agentSessionId: "x-1",
      agentRequest,
      createdAt: T0 + 1,
    });
    store.sessions.setAgentState("s2", { modes: { currentModeId: "code" } });
    const worktree = { repository: "/r", path: "/w/r-s3", branch: "berth/s3", base: "main", baseCommit: "abc", state: "active", createdAt: T0 };
    store.sessions.create({ id: "s3", agent: "demo", cwd: "/w/r-s3", worktree, createdAt: T0 + 2 });
    store.sessions.setWorktree("s3", { ...worktree, state: "landed", landedCommit: "def" });
    store.close();

    const reopened = files.open(path);
    expect(reopened.sessions.get("s1")).toEqual(created);
    expect(reopened.sessions.get("s2")).toMatchObject({
      workspace: "ws",
      title: "fix",
      agentSessionId: "x-1",
      agentRequest,
      agentState: { modes: { currentModeId: "code" } },
    });
    expect(reopened.sessions.get("s3")?.worktree).toEqual({ ...worktree, state: "landed", landedCommit: "def" });
    expect(() => reopened.sessions.setAgentState("nope", {})).toThrow(StoreNotFoundError);
    expect(() => reopened.sessions.setWorktree("nope", null)).toThrow(StoreNotFoundError);
    expect(reopened.sessions.get("nope")).toBeUndefined();
  });

  it("list newest first, optionally only one cwd; touch moves a session forward but never back", () => {
    const store = files.open(files.path());
    newSession(store, "old", { cwd: "/a", createdAt: T0 });
    newSession(store, "mid", { cwd: "/b", createdAt: T0 + 10 });
    newSession(store, "new", { cwd: "/a", createdAt: T0 + 20 });
    expect(store.sessions.list().map((s) => s.id)).toEqual(["new", "mid", "old"]);
    expect(store.sessions.list({ cwd: "/a" }).map((s) => s.id)).toEqual(["new", "old"]);
    expect(store.sessions.list({ cwd: "/elsewhere" })).toEqual([]);

    store.sessions.touch("old", T0 + 30);
    store.sessions.touch("old", T0 + 5);
    expect(store.sessions.get("old")?.updatedAt).toBe(T0 + 30);
    expect(store.sessions.list().map((s) => s.id)).toEqual(["old", "new", "mid"]);
  });

  it("set the title and the agent's session id, and clear them", () => {
    const store = files.open(files.path());
    newSession(store, "s1");
    store.sessions.setTitle("s1", "Refactor the parser");
    store.sessions.setAgentSessionId("s1", "agent-42");
    expect(store.sessions.get("s1")).toMatchObject({ title: "Refactor the parser", agentSessionId: "agent-42" });
    store.sessions.setTitle("s1", null);
    expect(store.sessions.get("s1")?.title).toBeNull();
  });

  it("name the missing session when updating one that does not exist", () => {
    const store = files.open(files.path());
    expect(() => store.sessions.setTitle("ghost", "t")).toThrow(StoreNotFoundError);
    expect(() => store.sessions.touch("ghost", T0)).toThrow('sessions.touch: no session with id "ghost"');
    expect(() => store.sessions.setAgentSessionId("ghost", "a")).toThrow(StoreNotFoundError);
  });

  it("delete a session with its events and questions", () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "doomed");
    newSession(store, "kept");
    for (const id of ["doomed", "kept"]) {
      store.events.append(id, "prompt", { text: id }, T0);
      store.questions.ask({ id: `q-${id}`, sessionId: id, kind: "permission", request: {}, askedAt: T0 });
    }
    expect(store.sessions.delete("doomed")).toBe(true);
    expect(store.sessions.delete("doomed")).toBe(false);

    const raw = files.raw(path);
    const count = (table: string, id: string) => raw.prepare(`SELECT count(*) FROM ${table} WHERE session_id = ?`).pluck().get(id);
    expect(count("events", "doomed")).toBe(0);
    expect(count("questions", "doomed")).toBe(0);
    expect(count("events", "kept")).toBe(1);
    expect(count("questions", "kept")).toBe(1);
    expect(store.questions.get("q-doomed")).toBeUndefined();
    expect(() => store.events.read("doomed")).toThrow(StoreNotFoundError);
  });

  it("refuse a duplicate id with a StoreWriteError and keep the original", () => {
    const store = files.open(files.path());
    newSession(store, "s1", { cwd: "/original" });
    const error = catchError(() => newSession(store, "s1", { cwd: "/other" }));
    expect(error).toBeInstanceOf(StoreWriteError);
    expect((error as StoreWriteError).code).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
    expect((error as Error).message).toMatch(/^sessions\.create failed with SQLITE_CONSTRAINT_PRIMARYKEY/);
    expect(store.sessions.get("s1")?.cwd).toBe("/original");
  });

  it("reject bad input, naming the field", () => {
    const store = files.open(files.path());
    expect(() => store.sessions.create({ id: "s", agent: "demo", cwd: "relative/dir", createdAt: T0 })).toThrow(
      'sessions.create: cwd must be an absolute path, got "relative/dir"',
    );
    expect(() => store.sessions.create({ id: "", agent: "demo", cwd: "/a", createdAt: T0 })).toThrow(
      "sessions.create: id must be a non-empty string",
    );
    expect(() => store.sessions.create({ id: "s", agent: "demo", cwd: "/a", createdAt: Number.NaN })).toThrow(StoreInputError);
    expect(() => store.sessions.create({ id: "s", agent: "demo", cwd: "/a", workspace: "", createdAt: T0 })).toThrow(
      "workspace must be a non-empty string",
    );
    expect(store.sessions.list()).toEqual([]);
  });

  it("show the changes the host's writer queued until each has landed: a title only if none, updatedAt never back, list order by them", () => {
    const store = files.open(files.path());
    newSession(store, "old", { createdAt: T0 });
    newSession(store, "new", { createdAt: T0 + 10 });
    store.sessions.setTitle("new", "kept");
    store.sessions.queued("old", { updatedAt: T0 + 100, title: "first" });
    store.sessions.queued("old", { updatedAt: T0 + 50, agentState: { mode: "code" } });
    store.sessions.queued("new", { title: "ignored", agentSessionId: "agent-1" });
    expect(store.sessions.get("old")).toMatchObject({ title: "first", updatedAt: T0 + 100, agentState: { mode: "code" } });
    expect(store.sessions.get("new")).toMatchObject({ title: "kept", agentSessionId: "agent-1", updatedAt: T0 + 10 });
    expect(store.sessions.list().map((session) => session.id)).toEqual(["old", "new"]);
    store.sessions.landed("old");
    expect(store.sessions.get("old")).toMatchObject({ title: "first", updatedAt: T0 + 100 });
    store.sessions.landed("old");
    store.sessions.landed("new");
    // Nothing was stored: once landed, reads show the stored rows alone.
    expect(store.sessions.get("old")).toMatchObject({ title: null, updatedAt: T0, agentState: null });
    expect(store.sessions.list().map((session) => session.id)).toEqual(["new", "old"]);
  });

  it("read a page with the queued changes: a session a queued touch moved ahead is on the page of its new place, once", () => {
    const store = files.open(files.path());
    for (let i = 0; i < 6; i++) newSession(store, `s${i}`, { createdAt: T0 + i });
    const ids = (sessions: readonly { id: string }[]) => sessions.map((session) => session.id);
    expect(ids(store.sessions.page({ limit: 3 }))).toEqual(["s5", "s4", "s3"]);
    // s0, the oldest stored, was touched: until its write lands it leads every list and page.
    store.sessions.queued("s0", { updatedAt: T0 + 100 });
    expect(ids(store.sessions.page({ limit: 3 }))).toEqual(["s0", "s5", "s4"]);
    const s4 = store.sessions.get("s4")!;
    expect(ids(store.sessions.page({ after: s4, limit: 3 }))).toEqual(["s3", "s2", "s1"]);
    const s1 = store.sessions.get("s1")!;
    expect(store.sessions.page({ after: s1, limit: 3 })).toEqual([]);
    expect(ids(store.sessions.page({ cwd: "/elsewhere", limit: 3 }))).toEqual([]);
    expect(ids(store.sessions.page({ limit: 6 }))).toEqual(ids(store.sessions.list()));
  });
});
