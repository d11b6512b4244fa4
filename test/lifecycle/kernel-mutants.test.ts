import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/lifecycle/clock.js";
import { ConnectionCleanups } from "../../src/lifecycle/connection-cleanups.js";
import { Executions, TurnAlreadyRunningError } from "../../src/lifecycle/executions.js";
import { recordMessages } from "../../src/lifecycle/lifecycle-records.js";
import { Listeners } from "../../src/lifecycle/listeners.js";
import { describeLocation, InvalidLocationError, locationKey } from "../../src/lifecycle/location-key.js";
import { LocationServicesCache, LocationServicesClosedError } from "../../src/lifecycle/location-services-cache.js";
import { MinHeap } from "../../src/lifecycle/min-heap.js";
import { AcquisitionFailedError, HoldsClosedError, StaleHoldError } from "../../src/lifecycle/session-holds.js";
import { settlePromises, VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { GRACE, holdsHarness } from "./holds-harness.js";
import { LocationRetention } from "../../src/lifecycle/location-retention.js";
import { HOUR, MINUTE, retentionHarness } from "./retention-harness.js";

/** Tests written to kill the mutants StrykerJS found surviving (see docs/lifecycle.md, "Mutation testing"). */

const app = locationKey("/w/app");

describe("errors and records say what they are", () => {
  it("every kernel error has its name and a message that names what failed", () => {
    const cases: Array<[Error, string, string | RegExp]> = [
      [new AcquisitionFailedError("s1", new Error("boom")), "AcquisitionFailedError", "could not start the agent for session s1: boom"],
      [new AcquisitionFailedError("s1", "text"), "AcquisitionFailedError", "could not start the agent for session s1: text"],
      [new StaleHoldError("s1", "h1"), "StaleHoldError", "hold of h1 on session s1 ended before its agent was ready"],
      [new HoldsClosedError(), "HoldsClosedError", "session holds are closed (the host is shutting down)"],
      [new TurnAlreadyRunningError("s1"), "TurnAlreadyRunningError", "session s1 already has a turn in flight"],
      [new InvalidLocationError("x"), "InvalidLocationError", "x"],
      [
        new LocationServicesClosedError(locationKey("/w/a", "ws")),
        "LocationServicesClosedError",
        "location services are closed (the host is shutting down): /w/a [workspace ws] was not started",
      ],
    ];
    for (const [error, name, message] of cases) {
      expect(error.name).toBe(name);
      expect(error.message).toEqual(message);
    }
  });

  it("the records' messages are the lines operators grep for", () => {
    expect(recordMessages).toEqual({
      location_booted: "location services booted",
      location_evicted: "location services evicted",
      location_kept: "location eviction cancelled: work admitted during cleanup",
      session_interrupted: "session interrupted",
    });
  });
});

describe("location keys, strictly", () => {
  it("refuses empty, NUL and empty workspaces; ids differ by workspace; descriptions name the workspace", () => {
    expect(() => locationKey("")).toThrow(/non-empty absolute path/);
    expect(() => locationKey(42 as unknown as string)).toThrow(InvalidLocationError);
    expect(() => locationKey("/w/a\0b")).toThrow(/contains a NUL byte/);
    expect(() => locationKey("/w/a", "")).toThrow(/workspace id must be a non-empty string/);
    expect(() => locationKey("/w/a", 7 as unknown as string)).toThrow(InvalidLocationError);
    expect(locationKey("/w/a", null)).toEqual({ directory: "/w/a", workspace: undefined, id: "/w/a" });
    expect(locationKey("/w/a", "ws").id).toBe("/w/a\0ws");
    expect(describeLocation(locationKey("/w/a"))).toBe("/w/a");
    expect(describeLocation(locationKey("/w/a", "ws"))).toBe("/w/a [workspace ws]");
  });
});

describe("listeners", () => {
  it("removing a listener stops it; a failure goes to onError and the others still run", () => {
    const errors: unknown[] = [];
    const listeners = new Listeners<number>((error) => errors.push(error));
    const seen: number[] = [];
    const remove = listeners.add(() => {
      throw new Error("first fails");
    });
    listeners.add((n) => seen.push(n));
    listeners.emit(1);
    expect(seen).toEqual([1]);
    expect(errors).toEqual([new Error("first fails")]);
    expect(remove()).toBe(true);
    listeners.emit(2);
    expect(errors).toHaveLength(1);
    expect(seen).toEqual([1, 2]);
  });

  it("without onError the first failure is rethrown after every listener ran", () => {
    const listeners = new Listeners<number>();
    const seen: number[] = [];
    listeners.add(() => {
      throw new Error("one");
    });
    listeners.add(() => {
      throw new Error("two");
    });
    listeners.add((n) => seen.push(n));
    let caught: unknown;
    try {
      listeners.emit(1);
    } catch (error) {
      caught = error;
    }
    expect(caught).toEqual(new Error("one"));
    expect(seen).toEqual([1]);
  });
});

describe("system clock", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("now is Date.now; a timeout fires once after its delay; cancel prevents it; waits beyond 2^31-1 ms are chained on elapsed time", () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
    expect(systemClock.now()).toBe(1_000_000);
    const elapsedBefore = systemClock.elapsed();
    // A step of the wall clock: now() follows it, elapsed() and the timers do not.
    vi.setSystemTime(5_000_000);
    expect(systemClock.now()).toBe(5_000_000);
    expect(systemClock.elapsed()).toBe(elapsedBefore);
    const fired: string[] = [];
    systemClock.setTimeout(() => fired.push("short"), 100);
    const cancelled = systemClock.setTimeout(() => fired.push("cancelled"), 100);
    cancelled.cancel();
    const long = 2 ** 31 + 5_000;
    systemClock.setTimeout(() => fired.push("long"), long);
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["short"]);
    // The wall clock set back a day before the first leg of the chained wait ends: the long timeout is not delayed by it.
    vi.setSystemTime(Date.now() - 86_400_000);
    vi.advanceTimersByTime(2 ** 31 - 1 - 100);
    expect(fired).toEqual(["short"]);
    vi.advanceTimersByTime(long - (2 ** 31 - 1) - 1);
    expect(fired).toEqual(["short"]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["short", "long"]);
    const exact = systemClock.setTimeout(() => fired.push("max"), 2 ** 31 - 1);
    vi.advanceTimersByTime(2 ** 31 - 1);
    expect(fired).toEqual(["short", "long", "max"]);
    exact.cancel();
    systemClock.setTimeout(() => fired.push("negative"), -5);
    vi.advanceTimersByTime(0);
    expect(fired).toEqual(["short", "long", "max", "negative"]);
  });
});

describe("virtual clock and heap", () => {
  it("settlePromises runs as many macrotask rounds as asked", async () => {
    const order: string[] = [];
    const chain = async (depth: number) => {
      for (let i = 0; i < depth; i++) await new Promise<void>((resolve) => setImmediate(resolve));
      order.push(`depth ${depth}`);
    };
    void chain(1);
    void chain(3);
    await settlePromises(2);
    expect(order).toEqual(["depth 1"]);
    await settlePromises(1);
    expect(order).toEqual(["depth 1", "depth 3"]);
    await settlePromises();
  });

  it("ties fire in creation order; a cancelled timer stays cancelled when cancelled twice", async () => {
    const clock = new VirtualClock(0);
    const fired: string[] = [];
    for (const name of ["a", "b", "c", "d"]) clock.setTimeout(() => fired.push(name), 10);
    const x = clock.setTimeout(() => fired.push("x"), 10);
    x.cancel();
    x.cancel();
    expect(clock.pendingTimers()).toBe(4);
    await clock.advance(10);
    expect(fired).toEqual(["a", "b", "c", "d"]);
    expect(clock.pendingTimers()).toBe(0);
    const fired2 = clock.setTimeout(() => undefined, 0);
    await clock.advance(0);
    fired2.cancel();
    expect(clock.pendingTimers()).toBe(0);
  });

  it("the heap pops in order whatever was pushed", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 50 }), { maxLength: 60 }), (values) => {
        const heap = new MinHeap<number>((a, b) => a < b);
        for (const v of values) heap.push(v);
        expect(heap.size).toBe(values.length);
        const out: number[] = [];
        for (let v = heap.pop(); v !== undefined; v = heap.pop()) out.push(v);
        expect(out).toEqual([...values].sort((a, b) => a - b));
        expect(heap.size).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});

describe("executions, precisely", () => {
  it("activeAt lists what runs; a settled location is forgotten only when its last session settles; settled() of an idle session is undefined", () => {
    const clock = new VirtualClock(0);
    const executions = new Executions(clock);
    expect(executions.settled("s1")).toBeUndefined();
    const a = executions.begin("s1", app, () => undefined);
    const b = executions.begin("s2", app, () => undefined);
    expect(executions.activeAt(app.id).map((e) => e.sessionId)).toEqual(["s1", "s2"]);
    expect(executions.activeAt("/nowhere")).toEqual([]);
    expect(a.settle()).toMatchObject({ outcome: "completed", reason: undefined });
    expect(executions.hasActiveAt(app.id)).toBe(true);
    expect(b.settle("failed")).toMatchObject({ outcome: "failed", reason: undefined });
    expect(executions.hasActiveAt(app.id)).toBe(false);
    expect([...executions.activeLocationIds()]).toEqual([]);
    expect(a.settle()).toBeUndefined();
  });
});

describe("connection cleanups, precisely", () => {
  it("has/size follow registrations; releaseIfCurrent says whether it released; a closed connection keeps no index", async () => {
    const cleanups = new ConnectionCleanups();
    const ran: string[] = [];
    const one = cleanups.register("a", () => void ran.push("a"), "c1");
    expect(cleanups.has("a")).toBe(true);
    expect(cleanups.has("b")).toBe(false);
    expect(one.version).toBeGreaterThan(0);
    const two = cleanups.register("b", () => void ran.push("b"), "c1");
    expect(two.version).toBe(one.version + 1);
    expect(one.releaseIfCurrent()).toBe(true);
    expect(one.releaseIfCurrent()).toBe(false);
    expect(cleanups.size()).toBe(1);
    await cleanups.cleanupForConnection("c1");
    expect(ran).toEqual(["b"]);
    expect(cleanups.size()).toBe(0);
    // The connection's index is gone: registering again under it and closing it runs only the new one.
    cleanups.register("c", () => void ran.push("c"), "c1");
    await cleanups.cleanupForConnection("c1");
    await cleanups.cleanupForConnection("c1");
    expect(ran).toEqual(["b", "c"]);
  });

  it("a registration moved to another connection is run by that connection only", async () => {
    const cleanups = new ConnectionCleanups();
    const ran: string[] = [];
    cleanups.register("x", () => void ran.push("x@c1"), "c1");
    cleanups.register("x", () => void ran.push("x@c2"), "c2");
    expect(ran).toEqual(["x@c1"]);
    await cleanups.cleanupForConnection("c1");
    expect(ran).toEqual(["x@c1"]);
    await cleanups.cleanupForConnection("c2");
    expect(ran).toEqual(["x@c1", "x@c2"]);
  });
});

describe("services cache, precisely", () => {
  it("entries lists the current entries; states go booting → ready → closing → closed", async () => {
    const states: string[] = [];
    let entryRef: { state: string } | undefined;
    const cache = new LocationServicesCache<object>({
      boot: async () => ({}),
      close: async () => {
        states.push(entryRef!.state);
      },
    });
    const entry = cache.open(app);
    entryRef = entry;
    expect(entry.state).toBe("booting");
    expect(cache.entries()).toEqual([entry]);
    await entry.ready;
    expect(entry.state).toBe("ready");
    await cache.close(entry, "idle");
    expect(states).toEqual(["closing"]);
    expect(entry.state).toBe("closed");
    expect(cache.entries()).toEqual([]);
  });

  it("a failed boot of a replaced entry never removes its replacement", async () => {
    const gates: Array<{ reject: (e: Error) => void; resolve: (v: object) => void }> = [];
    const cache = new LocationServicesCache<object>({
      boot: () => new Promise<object>((resolve, reject) => gates.push({ resolve, reject })),
      close: async () => undefined,
    });
    const first = cache.open(app);
    void cache.close(first, "idle");
    const second = cache.open(app);
    await settlePromises();
    gates[0]!.reject(new Error("first failed"));
    await settlePromises();
    gates[1]?.resolve({});
    await settlePromises();
    expect(cache.entry(app)).toBe(second);
  });

  it("closeAll waits for closes still under way from earlier closes", async () => {
    let release!: () => void;
    const closed: string[] = [];
    const cache = new LocationServicesCache<object>({
      boot: async () => ({}),
      close: () =>
        new Promise<void>((resolve) => {
          release = () => {
            closed.push("first");
            resolve();
          };
        }),
    });
    const entry = cache.open(app);
    await entry.ready;
    void cache.close(entry, "idle");
    let done = false;
    const all = cache.closeAll().then(() => (done = true));
    await settlePromises();
    expect(done).toBe(false);
    release();
    await all;
    expect(closed).toEqual(["first"]);
  });

  it("after a close finishes, the key no longer waits for it: a new boot starts at once", async () => {
    let boots = 0;
    const cache = new LocationServicesCache<object>({ boot: async () => ({ n: ++boots }), close: async () => undefined });
    const first = cache.open(app);
    await first.ready;
    await cache.close(first, "idle");
    // A stale close of the first stay finishing later must not drop a newer stay's close.
    const second = cache.open(app);
    await second.ready;
    const closingSecond = cache.close(second, "idle");
    await cache.close(first, "idle");
    const third = cache.open(app);
    let thirdReady = false;
    void third.ready.then(() => (thirdReady = true));
    await settlePromises(1);
    await closingSecond;
    await third.ready;
    expect(thirdReady).toBe(true);
    expect(boots).toBe(3);
  });
});

describe("session holds, precisely", () => {
  it("a stale childLost (another child) changes nothing; an unknown session's accessors are empty", async () => {
    const h = holdsHarness();
    expect(h.holds.release("nobody", "x")).toBe(false);
    expect(h.holds.holderIds("nobody")).toEqual([]);
    expect(h.holds.releaseAt("nobody")).toBeUndefined();
    expect(h.holds.awaitingTurnEnd("nobody")).toBe(false);
    h.holds.childLost("nobody", h.newChild());
    h.holds.releaseAll("nobody");
    expect(h.holds.trackedSessions()).toBe(0);

    h.holds.hold("s1", "a");
    h.holds.hold("s1", "b");
    expect(h.holds.holderIds("s1")).toEqual(["a", "b"]);
    const child = await h.succeed(0);
    // The second holder's acquisition joins the same start, as the host's single-flight acquirer does.
    await h.succeed(1, child);
    h.holds.childLost("s1", h.newChild());
    expect(h.holds.child("s1")).toBe(child);
    expect(h.holds.release("s1", "a")).toBe(true);
    expect(h.holds.release("s1", "a")).toBe(false);
    h.holds.release("s1", "b");
    expect(h.holds.releaseAt("s1")).toBe(h.clock.now() + GRACE);
    // A lost child while the clock runs: the clock stops, nothing is released, the session is forgotten.
    h.holds.childLost("s1", child);
    expect(h.holds.releaseAt("s1")).toBeUndefined();
    expect(h.clock.pendingTimers()).toBe(0);
    await h.clock.advance(2 * GRACE);
    expect(h.releases).toEqual([]);
    expect(h.holds.trackedSessions()).toBe(0);
  });

  it("while its child is stopped the session is releasing; the child lost then does not let a new start overtake the stop", async () => {
    const h = holdsHarness({ stopsWait: true });
    h.holds.hold("s1", "a");
    const child = await h.succeed(0);
    h.holds.release("s1", "a");
    await h.clock.advance(GRACE);
    expect(h.releases).toEqual([{ sessionId: "s1", child, at: h.clock.now() }]);
    expect(h.holds.state("s1")).toBe("releasing");
    h.holds.childLost("s1", child);
    expect(h.holds.state("s1")).toBe("releasing");
    const again = h.holds.hold("s1", "b");
    await h.clock.advance(0);
    expect(h.acquisitions).toHaveLength(1);
    h.stopGates[0]!.resolve();
    await h.clock.advance(0);
    expect(h.acquisitions).toHaveLength(2);
    const next = await h.succeed(1);
    await expect(again.child).resolves.toBe(next);
    expect(h.holds.state("s1")).toBe("live");
  });

  it("every holder let go (releaseAll) while the release clock runs leaves the release where it was", async () => {
    const h = holdsHarness();
    h.holds.hold("s1", "a");
    const child = await h.succeed(0);
    h.holds.release("s1", "a");
    const releaseAt = h.clock.now() + GRACE;
    await h.clock.advance(GRACE / 2);
    h.holds.releaseAll("s1");
    expect(h.holds.releaseAt("s1")).toBe(releaseAt);
    await h.clock.advance(GRACE / 2);
    expect(h.releases).toEqual([{ sessionId: "s1", child, at: releaseAt }]);
  });

  it("a turn that ends while the release clock runs leaves the release where it was", async () => {
    const h = holdsHarness();
    h.holds.hold("s1", "a");
    const child = await h.succeed(0);
    h.beginTurn("s1");
    h.holds.release("s1", "a");
    const releaseAt = h.clock.now() + GRACE;
    expect(h.holds.releaseAt("s1")).toBe(releaseAt);
    await h.clock.advance(GRACE / 2);
    await h.endTurn("s1");
    expect(h.holds.releaseAt("s1")).toBe(releaseAt);
    await h.clock.advance(GRACE / 2);
    expect(h.releases).toEqual([{ sessionId: "s1", child, at: releaseAt }]);
  });

  it("memory is bounded by sessions in use: a released, failed or forgotten session leaves nothing behind", async () => {
    const h = holdsHarness();
    const t = h.holds.hold("s1", "a");
    expect(h.holds.trackedSessions()).toBe(1);
    await h.fail(0);
    await expect(t.child).rejects.toBeInstanceOf(AcquisitionFailedError);
    expect(h.holds.trackedSessions()).toBe(0);

    const u = h.holds.hold("s2", "a");
    await h.succeed(1);
    u.release();
    expect(h.holds.trackedSessions()).toBe(1);
    await h.clock.advance(GRACE);
    expect(h.releases).toHaveLength(1);
    expect(h.holds.trackedSessions()).toBe(0);
    expect(h.holds.state("s2")).toBe("childless");
  });

  it("a clock that fired while a turn ran waits; a holder arriving then cancels the wait; a turn end of another session changes nothing", async () => {
    const h = holdsHarness();
    const t = h.holds.hold("s1", "a");
    await h.succeed(0);
    h.beginTurn("s1");
    h.beginTurn("s2");
    t.release();
    await h.clock.advance(GRACE);
    expect(h.holds.awaitingTurnEnd("s1")).toBe(true);
    await h.endTurn("s2");
    expect(h.holds.awaitingTurnEnd("s1")).toBe(true);
    const back = h.holds.hold("s1", "b");
    expect(h.holds.awaitingTurnEnd("s1")).toBe(false);
    await h.endTurn("s1");
    expect(h.holds.releaseAt("s1")).toBeUndefined();
    back.release();
    await h.clock.advance(GRACE);
    expect(h.releases).toHaveLength(1);
  });

  it("a ticket asked for its child after a failure rejects with the failure, every time", async () => {
    const h = holdsHarness();
    const t = h.holds.hold("s1", "a");
    await h.fail(0, "no agent");
    await expect(t.child).rejects.toThrow("could not start the agent for session s1: no agent");
    await expect(t.child).rejects.toBeInstanceOf(AcquisitionFailedError);
    const u = h.holds.hold("s1", "a");
    const child = await h.succeed(1);
    expect(await u.child).toBe(child);
    expect(await u.child).toBe(child);
  });

  it("an acquirer that hands back a child already released fails that acquisition", async () => {
    const h = holdsHarness();
    const first = h.holds.hold("s1", "a");
    const child = await h.succeed(0);
    first.release();
    await h.clock.advance(GRACE);
    expect(h.releases.map((r) => r.child)).toEqual([child]);
    const again = h.holds.hold("s1", "a");
    await h.succeed(1, child);
    await expect(again.child).rejects.toThrow("the acquired agent child had already exited");
    expect(h.holds.state("s1")).toBe("childless");
    expect(h.holds.trackedSessions()).toBe(0);
  });

  it("a release that fails is reported, and the session still becomes childless", async () => {
    const errors: unknown[] = [];
    const h = holdsHarness({ releaseFails: true, onError: (error) => errors.push(error) });
    const t = h.holds.hold("s1", "a");
    await h.succeed(0);
    t.release();
    await h.clock.advance(GRACE);
    expect(errors).toEqual([new Error("cannot stop")]);
    expect(h.holds.state("s1")).toBe("childless");
  });

  it("a release that fails with no onError still leaves the session childless, and a new holder acquires again", async () => {
    const h = holdsHarness({ releaseFails: true });
    const t = h.holds.hold("s1", "a");
    await h.succeed(0);
    t.release();
    await h.clock.advance(GRACE);
    expect(h.holds.state("s1")).toBe("childless");
    h.holds.hold("s1", "b");
    expect(h.acquisitions).toHaveLength(2);
  });

  it("a ticket's child asked for while pending settles when the acquisition does, with the child or the failure", async () => {
    const h = holdsHarness();
    const ok = h.holds.hold("s1", "a");
    const okChild = ok.child;
    const again = ok.child;
    const bad = h.holds.hold("s2", "a");
    const badChild = bad.child;
    const child = await h.succeed(0);
    await h.fail(1, "no agent");
    expect(await okChild).toBe(child);
    expect(await again).toBe(child);
    await expect(badChild).rejects.toThrow("could not start the agent for session s2: no agent");
  });

  it("an incarnation's fence: after its session was forgotten and held again, the old ticket is not current", async () => {
    const h = holdsHarness();
    const old = h.holds.hold("s1", "a");
    await h.fail(0);
    const fresh = h.holds.hold("s1", "a");
    expect(old.isCurrent()).toBe(false);
    expect(fresh.isCurrent()).toBe(true);
    expect(fresh.incarnation).toBeGreaterThan(old.incarnation);
    expect(old.release()).toBe(false);
    expect(h.holds.holderIds("s1")).toEqual(["a"]);
  });
});

describe("location retention, precisely", () => {
  it("opening a loaded location again neither boots nor resets its last durable event", async () => {
    const h = retentionHarness();
    const services = await h.retention.open(app);
    const activeAt = h.retention.status(app)!.activeAt;
    await h.clock.advance(10 * MINUTE);
    expect(await h.retention.open(app)).toBe(services);
    expect(h.retention.status(app)!.activeAt).toBe(activeAt);
    expect(h.retention.status(app)!.expiresAt).toBe(h.clock.now() + 60 * MINUTE);
    expect(h.records.filter((r) => r.kind === "location_booted")).toHaveLength(1);
  });

  it("a location being evicted takes no durable event", async () => {
    const h = retentionHarness({ slowClose: true });
    await h.retention.open(app);
    await h.clock.advance(60 * MINUTE);
    expect(h.retention.status(app)?.state).toBe("evicting");
    expect(h.retention.touch(app)).toBe(false);
    h.closeGate.resolve();
    await h.retention.whenSettled();
  });

  it("a turn at a location retention never loaded does not break the sweep", async () => {
    const h = retentionHarness();
    h.executions.begin("s1", locationKey("/w/elsewhere"), () => undefined);
    await h.retention.open(app);
    await h.clock.advance(61 * MINUTE);
    await h.retention.whenSettled();
    expect(h.evictions()).toHaveLength(1);
  });

  it("a stay replaced behind retention's back is never evicted twice, and its replacement is kept", async () => {
    const h = retentionHarness();
    const first = h.cache.open(app);
    await h.retention.open(app);
    await h.cache.close(first, "shutdown");
    await h.clock.advance(30 * MINUTE);
    const second = await h.retention.open(app);
    // The first stay's deadline comes: nothing is decided for it.
    await h.clock.advance(31 * MINUTE);
    await h.retention.whenSettled();
    expect(h.evictions()).toEqual([]);
    expect(h.retention.peek(app)).toBe(second);
    expect(h.retention.status(app)?.state).toBe("retained");
    await h.clock.advance(30 * MINUTE);
    await h.retention.whenSettled();
    expect(h.evictions()).toHaveLength(1);
    expect(h.retention.status(app)).toBeUndefined();
  });

  it("start() twice runs one sweep loop", async () => {
    const h = retentionHarness();
    const before = h.clock.pendingTimers();
    h.retention.start();
    expect(h.clock.pendingTimers()).toBe(before);
  });

  it("a turn admitted during cleanup that already settled before the re-check still keeps the location", async () => {
    const h = retentionHarness();
    const first = await h.silentToolCall("s1", app, { settleDelayMs: 5 * MINUTE });
    await h.clock.advance(24 * HOUR + 1 * MINUTE);
    expect(h.retention.status(app)?.state).toBe("interrupting");
    const quick = await h.silentToolCall("s2", app);
    quick.finish();
    await quick.settled;
    await h.clock.advance(5 * MINUTE);
    await first.settled;
    await h.retention.whenSettled();
    expect(h.retention.status(app)?.state).toBe("retained");
    expect(h.records.filter((r) => r.kind === "location_kept")).toEqual([
      { kind: "location_kept", directory: "/w/app", workspace: undefined, reason: "work_admitted" },
    ]);
    // The next cleanup starts afresh: nothing admitted this time, so it is evicted.
    const again = await h.silentToolCall("s3", app, { settleDelayMs: 5 * MINUTE });
    await h.clock.advance(24 * HOUR + 1 * MINUTE);
    await h.clock.advance(5 * MINUTE);
    await again.settled;
    await h.retention.whenSettled();
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "inactivity" }]);
  });

  it("failures of a cleanup step are reported and the eviction goes on", async () => {
    const errors: string[] = [];
    const clock = new VirtualClock(0);
    const executions = new Executions(clock);
    const cache = new LocationServicesCache<object>({
      boot: async () => ({}),
      close: async () => {
        throw new Error("close failed");
      },
    });
    const records: string[] = [];
    const retention = new LocationRetention<object>({
      clock,
      executions,
      cache,
      idleTtlMs: MINUTE,
      maxActiveHoldMs: 2 * MINUTE,
      sweepIntervalMs: MINUTE,
      cancelPendingQuestions: () => {
        throw new Error("cancel failed");
      },
      record: (r) => records.push(r.kind),
      onError: (error, key) => errors.push(`${(error as Error).message} @ ${key.id}`),
    });
    retention.start();
    await retention.open(app);
    const turn = executions.begin("s1", app, () => void clock.setTimeout(() => turn.settle(), 10));
    await clock.advance(3 * MINUTE);
    await retention.whenSettled();
    expect(errors).toEqual(["cancel failed @ /w/app", "close failed @ /w/app"]);
    expect(records).toContain("location_evicted");
    expect(retention.status(app)).toBeUndefined();
    retention.stop();
  });

  it("whenSettled waits for a cleanup that waits on real time", async () => {
    let closedAt = 0;
    const clock = new VirtualClock(0);
    const retention = new LocationRetention<object>({
      clock,
      executions: new Executions(clock),
      cache: new LocationServicesCache<object>({
        boot: async () => ({}),
        close: () =>
          new Promise<void>((resolve) =>
            setTimeout(() => {
              closedAt = Date.now();
              resolve();
            }, 20),
          ),
      }),
      idleTtlMs: MINUTE,
      maxActiveHoldMs: 2 * MINUTE,
      sweepIntervalMs: MINUTE,
      cancelPendingQuestions: () => undefined,
      record: () => undefined,
    });
    retention.start();
    await retention.open(app);
    await clock.advance(MINUTE);
    await retention.whenSettled();
    expect(closedAt).toBeGreaterThan(0);
    retention.stop();
  });
});

describe("issue 13 paths, precisely", () => {
  it("a need that ends for a location that is not loaded (or no longer) changes nothing", async () => {
    const h = retentionHarness();
    const need = h.retention.beginNeed(app);
    need.end(true);
    expect(h.retention.status(app)).toBeUndefined();
    const other = h.retention.beginNeed(locationKey("/w/never"));
    other.end(false);
    expect(h.retention.list()).toEqual([]);
  });

  it("whenSettled does not settle while slices of a sweep are still due", async () => {
    const h = retentionHarness({ sweepSliceSize: 5 });
    h.retention.stop();
    for (let i = 0; i < 12; i++) await h.retention.open(locationKey(`/w/many/${i}`));
    await h.clock.advance(61 * MINUTE);
    h.retention.sweep();
    let settled = false;
    void h.retention.whenSettled().then(() => (settled = true));
    await settlePromises();
    expect(settled).toBe(false);
    await h.clock.advance(0);
    await settlePromises();
    expect(settled).toBe(true);
    expect(h.evictions()).toHaveLength(12);
  });

  it("without onError, a failing cleanup step still lets the eviction finish", async () => {
    const clock = new VirtualClock(0);
    const executions = new Executions(clock);
    const records: string[] = [];
    const retention = new LocationRetention<object>({
      clock,
      executions,
      cache: new LocationServicesCache<object>({
        boot: async () => ({}),
        close: async () => {
          throw new Error("close failed");
        },
      }),
      idleTtlMs: MINUTE,
      maxActiveHoldMs: 2 * MINUTE,
      sweepIntervalMs: MINUTE,
      cancelPendingQuestions: () => {
        throw new Error("cancel failed");
      },
      record: (r) => records.push(r.kind),
    });
    retention.start();
    await retention.open(app);
    const turn = executions.begin("s1", app, () => void clock.setTimeout(() => turn.settle(), 10));
    await clock.advance(3 * MINUTE);
    await retention.whenSettled();
    expect(records.filter((kind) => kind === "location_evicted")).toHaveLength(1);
    expect(retention.status(app)).toBeUndefined();
    retention.stop();
  });

  it("a stale close finishing never lets a replacement boot before a newer close has finished", async () => {
    const closes: Array<() => void> = [];
    const log: string[] = [];
    let boots = 0;
    const cache = new LocationServicesCache<{ n: number }>({
      boot: async () => {
        log.push(`boot ${++boots}`);
        return { n: boots };
      },
      close: (_key, services) =>
        new Promise<void>((resolve) =>
          closes.push(() => {
            log.push(`closed ${services.n}`);
            resolve();
          }),
        ),
    });
    const first = cache.open(app);
    await first.ready;
    void cache.close(first, "idle");
    await settlePromises();
    // The second stay waits for the first close; it is closed before it even booted.
    const second = cache.open(app);
    void cache.close(second, "idle");
    closes[0]!();
    await settlePromises();
    expect(log).toEqual(["boot 1", "closed 1", "boot 2"]);
    // A third stay must wait for the second close, which is still under way.
    const third = cache.open(app);
    await settlePromises();
    expect(log).toEqual(["boot 1", "closed 1", "boot 2"]);
    closes[1]!();
    await third.ready;
    expect(log).toEqual(["boot 1", "closed 1", "boot 2", "closed 2", "boot 3"]);
  });
});
