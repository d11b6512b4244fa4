import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HttpClientPresence } from "../../src/server/http-client-presence.js";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("a Streamable HTTP client's presence", () => {
  it("is gone idleMs after its last request or stream ended, not while one is open; each end counts once", () => {
    const gone: string[] = [];
    const presence = new HttpClientPresence(1_000, (id) => gone.push(id));
    const stream = presence.opened("a");
    const request = presence.opened("a");
    request();
    request();
    vi.advanceTimersByTime(5_000);
    expect(gone).toEqual([]);
    stream();
    vi.advanceTimersByTime(999);
    expect(gone).toEqual([]);
    // A request before the time is up starts the clock again from its end.
    presence.opened("a")();
    vi.advanceTimersByTime(999);
    expect(gone).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(gone).toEqual(["a"]);
    vi.advanceTimersByTime(10_000);
    expect(gone).toEqual(["a"]);
  });

  it("forgets a connection that closed, and every one when closing; an end after that changes nothing", () => {
    const gone: string[] = [];
    const presence = new HttpClientPresence(1_000, (id) => gone.push(id));
    const a = presence.opened("a");
    presence.opened("b")();
    presence.opened("c")();
    presence.forget("b");
    a();
    presence.close();
    presence.opened("d")();
    vi.advanceTimersByTime(5_000);
    expect(gone).toEqual(["d"]);
  });
});
