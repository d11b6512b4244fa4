import { describe, expect, it } from "vitest";
import { StoreNotFoundError } from "../../src/store/errors.js";
import type { Store } from "../../src/store/store.js";
import { T0, newSession, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();

const permissionRequest = {
  toolCall: { toolCallId: "call-1", title: "rm -rf build" },
  options: [
    { optionId: "allow", name: "Allow", kind: "allow_once" },
    { optionId: "deny", name: "Deny", kind: "reject_once" },
  ],
};

function ask(store: Store, id: string, sessionId: string, askedAt = T0) {
  return store.questions.ask({ id, sessionId, kind: "permission", request: permissionRequest, askedAt });
}

describe("questions", () => {
  it("are stored pending with their request, and survive a re-open unchanged", () => {
    const path = files.path();
    const store = files.open(path);
    newSession(store, "s1");
    const asked = store.questions.ask({
      id: "q1",
      sessionId: "s1",
      kind: "elicitation",
      request: { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
      askedAt: T0,
    });
    expect(asked).toMatchObject({ state: "pending", answer: null, reason: null, resolvedAt: null });
    store.close();

    const reopened = files.open(path);
    expect(reopened.questions.get("q1")).toEqual(asked);
    expect(reopened.questions.listPending("s1")).toEqual([asked]);
  });

  it("list pending ones oldest first, for all sessions or one", () => {
    const store = files.open(files.path());
    newSession(store, "s1");
    newSession(store, "s2");
    ask(store, "late", "s1", T0 + 20);
    ask(store, "early", "s2", T0 + 10);
    ask(store, "answered", "s1", T0 + 5);
    store.questions.resolve("answered", "answered", { outcome: "selected", optionId: "allow" }, T0 + 6);
    expect(store.questions.listPending().map((q) => q.id)).toEqual(["early", "late"]);
    expect(store.questions.listPending("s1").map((q) => q.id)).toEqual(["late"]);
    expect(store.questions.listPending("nobody")).toEqual([]);
  });

  it("take the first resolution only: later answers and cancellations lose and change nothing", () => {
    const store = files.open(files.path());
    newSession(store, "s1");
    ask(store, "q1", "s1");
    const answer = { outcome: "selected", optionId: "allow" };
    expect(store.questions.resolve("q1", "answered", answer, T0 + 3_600_000)).toBe(true);
    expect(store.questions.resolve("q1", "answered", { outcome: "selected", optionId: "deny" }, T0 + 3_600_001)).toBe(false);
    expect(store.questions.resolve("q1", "cancelled", "inactivity", T0 + 3_600_002)).toBe(false);
    expect(store.questions.get("q1")).toMatchObject({ state: "answered", answer, reason: null, resolvedAt: T0 + 3_600_000 });
  });

  it("let a cancellation win over a later answer, keeping its reason", () => {
    const store = files.open(files.path());
    newSession(store, "s1");
    ask(store, "q1", "s1");
    expect(store.questions.resolve("q1", "cancelled", "inactivity", T0 + 1)).toBe(true);
    expect(store.questions.resolve("q1", "answered", { outcome: "selected", optionId: "allow" }, T0 + 2)).toBe(false);
    expect(store.questions.get("q1")).toMatchObject({ state: "cancelled", answer: null, reason: "inactivity", resolvedAt: T0 + 1 });
  });

  it("decide the winner across two connections to the same file", () => {
    const path = files.path();
    const host = files.open(path);
    const other = files.open(path);
    newSession(host, "s1");
    ask(host, "q1", "s1");
    expect(other.questions.resolve("q1", "answered", "yes", T0 + 1)).toBe(true);
    expect(host.questions.resolve("q1", "cancelled", "closed", T0 + 2)).toBe(false);
    expect(host.questions.get("q1")).toMatchObject({ state: "answered", answer: "yes" });
  });

  it("name what is missing or malformed", () => {
    const store = files.open(files.path());
    newSession(store, "s1");
    expect(() => ask(store, "q1", "ghost")).toThrow('questions.ask: no session with id "ghost"');
    expect(() => store.questions.resolve("nope", "answered", 1, T0)).toThrow(StoreNotFoundError);
    expect(() => store.questions.ask({ id: "q1", sessionId: "s1", kind: "survey" as "permission", request: {}, askedAt: T0 })).toThrow(
      'questions.ask: kind must be one of permission, elicitation, got "survey"',
    );
    ask(store, "q1", "s1");
    expect(() => store.questions.resolve("q1", "pending" as "answered", 1, T0)).toThrow(
      "questions.resolve: state must be one of answered, cancelled, orphaned",
    );
    expect(() => store.questions.resolve("q1", "cancelled", "", T0)).toThrow("questions.resolve: reason must be a non-empty string");
    expect(store.questions.get("q1")?.state).toBe("pending");
  });
});
