import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { draftOf, keepDraft, keepUnsent } from "../../web/src/chat/drafts.js";

/** The browser's sessionStorage, for a module that uses only these three methods (unit tests run in Node). */
class MemoryStorage {
  readonly items = new Map<string, string>();
  refuse = false;
  getItem(key: string): string | null {
    if (this.refuse) throw new Error("SecurityError");
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    if (this.refuse) throw new Error("QuotaExceededError");
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}

let storage: MemoryStorage;
beforeEach(() => {
  storage = new MemoryStorage();
  (globalThis as { sessionStorage?: unknown }).sessionStorage = storage;
});
afterEach(() => {
  delete (globalThis as { sessionStorage?: unknown }).sessionStorage;
});

describe("a session's draft", () => {
  it("is kept by session, and empty text forgets it", () => {
    keepDraft("a", "half a thought");
    keepDraft("b", "another");
    expect([draftOf("a"), draftOf("b"), draftOf("c")]).toEqual(["half a thought", "another", ""]);
    keepDraft("a", "");
    expect(draftOf("a")).toBe("");
    expect([...storage.items.keys()]).toEqual(["berth.draft:b"]);
  });

  it("takes the messages a chat closed without sending, first, each in a paragraph of its own", () => {
    keepDraft("a", "typed after");
    keepUnsent("a", ["first queued", "then refused"]);
    expect(draftOf("a")).toBe("first queued\n\nthen refused\n\ntyped after");
    keepUnsent("b", ["alone"]);
    expect(draftOf("b")).toBe("alone");
    keepUnsent("c", []);
    expect(storage.items.has("berth.draft:c")).toBe(false);
  });

  it("lives only in the box when the storage refuses, without failing", () => {
    storage.refuse = true;
    expect(() => keepDraft("a", "text")).not.toThrow();
    expect(draftOf("a")).toBe("");
  });
});
