import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { monotonicClock, systemClock } from "../../src/lifecycle/clock.js";
import { lifecycleDefaults } from "../../src/lifecycle/defaults.js";
import { deferred } from "../../src/lifecycle/deferred.js";
import { Executions, TurnAlreadyRunningError } from "../../src/lifecycle/executions.js";
import type { LifecycleRecord } from "../../src/lifecycle/lifecycle-records.js";
import { InvalidLocationError, canonicalDirectory, describeLocation, locationKey } from "../../src/lifecycle/location-key.js";
import { LocationServicesCache, LocationServicesClosedError } from "../../src/lifecycle/location-services-cache.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { PendingQuestions } from "../../src/location/pending-questions.js";

describe("virtual clock", () => {
  it("runs due timers in deadline order, ties in creation order, and lets promise work settle between them", async () => {
    const clock = new VirtualClock(0);
    const log: string[] = [];
    clock.setTimeout(() => log.push("b@20"), 20);
    clock.setTimeout(() => {
      log.push("a@10");
      void Promise.resolve().then(() => clock.setTimeout(() => log.push("c@15 (scheduled by a)"), 5));
    }, 10);
    clock.setTimeout(() => log.push("d@20"), 20);
    const cancelled = clock.setTimeout(() => log.push("never"), 5);
    cancelled.cancel();
    await clock.advance(19);
    expect(log).toEqual(["a@10", "c@15 (scheduled by a)"]);
    expect(clock.now()).toBe(19);
    await clock.advance(1);
    expect(log).toEqual(["a@10", "c@15 (scheduled by a)", "b@20", "d@20"]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("fires any set of timers by deadline, ties by creation, however they were set", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 40 }), async (delays) => {
        const clock = new VirtualClock(0, 1);
        const fired: number[] = [];
        for (const [i, delay] of delays.entries()) clock.setTimeout(() => fired.push(i), delay);
        await clock.advance(20);
        const expected = delays.map((delay, i) => ({ delay, i })).sort((a, b) => a.delay - b.delay || a.i - b.i);
        expect(fired).toEqual(expected.map(({ i }) => i));
      }),
    );
  });

  it("reports the time of each timer while it runs", async () => {
    const clock = new VirtualClock(1_000);
    const seen: number[] = [];
    clock.setTimeout(() => seen.push(clock.now()), 500);
    await clock.advance(10_000);
    expect(seen).toEqual([1_500]);
    expect(clock.now()).toBe(11_000);
  });
});

describe("system clock", () => {
  it("waits longer than Node's 24.8-day timer limit instead of firing at once", async () => {
    let fired = false;
    const timer = systemClock.setTimeout(() => (fired = true), 30 * 24 * 3_600_000);
    await new Promise((resolve) => setTimeout(resolve, 30));
    timer.cancel();
    expect(fired).toBe(false);
  });
});

describe("lifecycle defaults", () => {
  it("are the documented ones: a 15 s grace, a 60 min idle TTL, a 24 h cap, a sweep each minute", () => {
    expect(lifecycleDefaults).toEqual({ releaseGraceMs: 15_000, idleTtlMs: 3_600_000, maxActiveHoldMs: 86_400_000, sweepIntervalMs: 60_000 });
  });
});

describe("monotonic clock", () => {
  it("reads elapsed time for both now() and elapsed(), and its timers fire", async () => {
    const before = performance.now();
    const readings = [monotonicClock.now(), monotonicClock.elapsed()];
    const after = performance.now();
    for (const reading of readings) {
      expect(reading).toBeGreaterThanOrEqual(before);
      expect(reading).toBeLessThanOrEqual(after);
    }
    // When it fires is Node's timer's business (whole milliseconds of a loop time read earlier): only that it does.
    let bound: NodeJS.Timeout | undefined;
    const fired = await new Promise<boolean>((resolve) => {
      monotonicClock.setTimeout(() => resolve(true), 5);
      bound = setTimeout(() => resolve(false), 10_000);
    });
    clearTimeout(bound);
    expect(fired).toBe(true);
  });
});

describe("location keys", () => {
  it("spells one directory one way", () => {
    for (const spelling of ["/w/app/", "/w/./app", "/w//app", "/w/x/../app", "/w/app"]) {
      expect(locationKey(spelling).id).toBe(locationKey("/w/app").id);
      expect(canonicalDirectory(spelling)).toBe("/w/app");
    }
    expect(canonicalDirectory("/")).toBe("/");
    expect(canonicalDirectory("//")).toBe("/");
  });

  it("keeps workspaces of one directory apart", () => {
    const a = locationKey("/w/app", "a");
    const b = locationKey("/w/app", "b");
    expect(a.id).not.toBe(b.id);
    expect(a.id).not.toBe(locationKey("/w/app").id);
    expect(a.directory).toBe(b.directory);
    expect(describeLocation(a)).toBe("/w/app [workspace a]");
    expect(locationKey("/w/app", null).workspace).toBeUndefined();
  });

  it("refuses relative and empty paths with a clear error", () => {
    expect(() => locationKey("w/app")).toThrow(new InvalidLocationError('location directory must be absolute, got relative path "w/app"'));
    expect(() => locationKey("./app")).toThrow(InvalidLocationError);
    expect(() => locationKey("")).toThrow(/non-empty absolute path/);
    expect(() => locationKey("/w/app", "")).toThrow(/workspace id/);
  });
});

describe("executions", () => {
  const app = locationKey("/w/app");

  it("admits one turn per session, joined by prompts sent during it, and lists active ones by location", () => {
    const ex = new Executions(new VirtualClock(0));
    ex.begin("s1", app, () => undefined);
    ex.begin("s2", locationKey("/w/other"), () => undefined);
    ex.begin("s1", app, () => undefined);
    expect(ex.active().map((e) => e.sessionId)).toEqual(["s1", "s2"]);
    expect(ex.activeAt(app.id).map((e) => e.sessionId)).toEqual(["s1"]);
    expect([...ex.activeLocationIds()]).toEqual([app.id, locationKey("/w/other").id]);
  });

  it("records the interruption reason and reports it with the settlement", async () => {
    const clock = new VirtualClock(0);
    const records: LifecycleRecord[] = [];
    const ex = new Executions(clock, (r) => records.push(r));
    const asked: string[] = [];
    const turn = ex.begin("s1", app, (reason) => asked.push(reason));
    const interrupted = ex.interrupt("s1", { reason: "user", awaitSettlement: true });
    // A second interruption does not change the first reason or ask twice.
    await ex.interrupt("s1", { reason: "shutdown" });
    expect(asked).toEqual(["user"]);
    await clock.advance(1_000);
    const settlement = turn.settle("completed");
    expect(await interrupted).toBe(true);
    expect(settlement).toMatchObject({ sessionId: "s1", outcome: "interrupted", reason: "user", startedAt: 0, settledAt: 1_000 });
    expect(records).toEqual([{ kind: "session_interrupted", sessionId: "s1", directory: "/w/app", workspace: undefined, reason: "user" }]);
    expect(await ex.interrupt("s1", { reason: "inactivity" })).toBe(false);
  });

  it("a runner that fails to stop its turn still leaves it interrupting, settled as interrupted", async () => {
    const ex = new Executions(new VirtualClock(0));
    const turn = ex.begin("s1", app, () => {
      throw new Error("agent pipe broken");
    });
    expect(await ex.interrupt("s1", { reason: "inactivity" })).toBe(true);
    expect(ex.get("s1")?.state).toEqual({ name: "interrupting", reason: "inactivity" });
    expect(turn.settle("failed")).toMatchObject({ outcome: "interrupted", reason: "inactivity" });
  });

  it("a turn with several prompts settles with its last answer, however often a handle is settled", async () => {
    const clock = new VirtualClock(0);
    const ex = new Executions(clock);
    const settlements: string[] = [];
    ex.onSettled((s) => settlements.push(`${s.sessionId} ${s.outcome} ${s.startedAt}-${s.settledAt}`));
    const began: string[] = [];
    ex.onBegan((e) => began.push(e.sessionId));
    const first = ex.begin("s1", app, () => undefined);
    await clock.advance(1_000);
    const second = ex.begin("s1", app, () => undefined);
    expect(began).toEqual(["s1"]);
    expect(first.settle("completed")).toBeUndefined();
    expect(first.settle("completed")).toBeUndefined();
    expect(ex.isActive("s1")).toBe(true);
    await clock.advance(1_000);
    expect(second.settle("failed")).toMatchObject({ outcome: "failed", startedAt: 0, settledAt: 2_000 });
    expect(ex.isActive("s1")).toBe(false);
    expect(settlements).toEqual(["s1 failed 0-2000"]);
  });

  it("one interruption stops every prompt of the turn; a prompt while it is being interrupted is refused", async () => {
    const ex = new Executions(new VirtualClock(0));
    const asked: string[] = [];
    const first = ex.begin("s1", app, (reason) => asked.push(`first ${reason}`));
    const second = ex.begin("s1", app, (reason) => asked.push(`second ${reason}`));
    const settled = ex.interrupt("s1", { reason: "user", awaitSettlement: true });
    expect(asked).toEqual(["first user"]);
    expect(() => ex.begin("s1", app, () => undefined)).toThrow(
      "session s1 is cancelling its turn in flight: send the prompt once the cancelled turn has ended",
    );
    first.settle("completed");
    expect(ex.get("s1")?.state).toEqual({ name: "interrupting", reason: "user" });
    expect(second.settle("completed")).toMatchObject({ outcome: "interrupted", reason: "user" });
    expect(await settled).toBe(true);
    // Settled: the next prompt begins a turn of its own.
    ex.begin("s1", app, () => undefined);
    expect(ex.get("s1")?.state).toEqual({ name: "running" });
  });

  it("an exclusive prompt never joins a running turn: it is refused, and the turn keeps its prompts", () => {
    const ex = new Executions(new VirtualClock(0));
    const first = ex.begin("s1", app, () => undefined, { exclusive: true });
    expect(() => ex.begin("s1", app, () => undefined, { exclusive: true })).toThrow(new TurnAlreadyRunningError("s1"));
    expect(first.settle("completed")).toMatchObject({ outcome: "completed" });
    expect(ex.isActive("s1")).toBe(false);
  });

  it("a stale turn handle cannot settle a newer turn", () => {
    const ex = new Executions(new VirtualClock(0));
    const first = ex.begin("s1", app, () => undefined);
    first.settle("failed");
    ex.begin("s1", app, () => undefined);
    expect(first.settle("completed")).toBeUndefined();
    expect(ex.isActive("s1")).toBe(true);
  });
});

describe("location services cache", () => {
  const app = locationKey("/w/app");

  function cacheWith(boot: () => Promise<{ n: number }>) {
    const closed: number[] = [];
    const cache = new LocationServicesCache<{ n: number }>({
      boot,
      close: async (_key, services) => {
        closed.push(services.n);
      },
    });
    return { cache, closed };
  }

  it("single-flight: concurrent first users share one boot", async () => {
    let boots = 0;
    const gate = deferred<void>();
    const { cache } = cacheWith(async () => {
      boots++;
      await gate.promise;
      return { n: boots };
    });
    const a = cache.open(app).ready;
    const b = cache.open(locationKey("/w/./app/")).ready;
    expect(cache.peek(app)).toBeUndefined();
    gate.resolve();
    expect(await a).toBe(await b);
    expect(boots).toBe(1);
    expect(cache.peek(app)).toBe(await a);
  });

  it("closed state: after closeAll nothing boots again, and an entry still booting is closed once it is up", async () => {
    let boots = 0;
    const gate = deferred<void>();
    const started = deferred<void>();
    const { cache, closed } = cacheWith(async () => {
      started.resolve();
      await gate.promise;
      return { n: ++boots };
    });
    const booting = cache.open(app);
    await started.promise;
    expect(cache.isClosed()).toBe(false);
    const closing = cache.closeAll();
    expect(cache.isClosed()).toBe(true);
    expect(() => cache.open(app)).toThrow(LocationServicesClosedError);
    expect(() => cache.open(locationKey("/w/other"))).toThrow(/shutting down.*\/w\/other/);
    gate.resolve();
    await closing;
    expect(await booting.ready).toEqual({ n: 1 });
    expect(closed).toEqual([1]);
    expect(boots).toBe(1);
    expect(cache.entries()).toEqual([]);
    expect(cache.peek(app)).toBeUndefined();
  });

  it("closed state: a replacement still waiting for its predecessor to close never boots once the cache is closed", async () => {
    const gate = deferred<void>();
    let boots = 0;
    const cache = new LocationServicesCache<{ n: number }>({
      boot: async () => ({ n: ++boots }),
      close: async () => gate.promise,
    });
    const first = cache.open(app);
    await first.ready;
    const closingFirst = cache.close(first, "idle");
    const second = cache.open(app);
    const closingAll = cache.closeAll();
    gate.resolve();
    await Promise.all([closingFirst, closingAll]);
    await expect(second.ready).rejects.toBeInstanceOf(LocationServicesClosedError);
    expect(boots).toBe(1);
    expect(second.state).toBe("failed");
  });

  it("closing a stale entry that failed to boot never removes or closes the replacement (identity, not key)", async () => {
    let attempt = 0;
    const { cache, closed } = cacheWith(async () => {
      if (++attempt === 1) throw new Error("port in use");
      return { n: attempt };
    });
    const failed = cache.open(app);
    await expect(failed.ready).rejects.toThrow("port in use");
    const replacement = cache.open(app);
    await replacement.ready;
    await cache.close(failed, "idle");
    expect(cache.entry(app)).toBe(replacement);
    expect(cache.peek(app)).toEqual({ n: 2 });
    expect(closed).toEqual([]);
    // And a later open of the key still finds the replacement, not a fresh boot.
    expect(cache.open(app)).toBe(replacement);
    expect(attempt).toBe(2);
  });

  it("closeAll tells close why: shutdown", async () => {
    const reasons: string[] = [];
    const cache = new LocationServicesCache<object>({ boot: async () => ({}), close: async (_key, _services, reason) => void reasons.push(reason) });
    await cache.open(app).ready;
    await cache.open(locationKey("/w/b")).ready;
    await cache.closeAll();
    expect(reasons).toEqual(["shutdown", "shutdown"]);
  });

  it("peek never boots", () => {
    let boots = 0;
    const { cache } = cacheWith(async () => ({ n: ++boots }));
    expect(cache.peek(app)).toBeUndefined();
    expect(cache.entry(app)).toBeUndefined();
    expect(boots).toBe(0);
  });

  it("closing is by identity: a stale entry never closes its replacement, and closing happens once", async () => {
    let boots = 0;
    const { cache, closed } = cacheWith(async () => ({ n: ++boots }));
    const first = cache.open(app);
    await first.ready;
    const closing = cache.close(first, "idle");
    const second = cache.open(app);
    await closing;
    await second.ready;
    await cache.close(first, "idle");
    await cache.close(first, "idle");
    expect(closed).toEqual([1]);
    expect(cache.peek(app)).toEqual({ n: 2 });
    expect(first.state).toBe("closed");
    expect(second.state).toBe("ready");
  });

  it("a replacement boots only after its predecessor has closed", async () => {
    const order: string[] = [];
    const closeGate = deferred<void>();
    let boots = 0;
    const cache = new LocationServicesCache<{ n: number }>({
      boot: async () => {
        order.push(`boot ${++boots}`);
        return { n: boots };
      },
      close: async (_key, services) => {
        await closeGate.promise;
        order.push(`closed ${services.n}`);
      },
    });
    const first = cache.open(app);
    await first.ready;
    const closing = cache.close(first, "idle");
    const second = cache.open(app);
    await Promise.resolve();
    expect(order).toEqual(["boot 1"]);
    closeGate.resolve();
    await closing;
    await second.ready;
    expect(order).toEqual(["boot 1", "closed 1", "boot 2"]);
  });

  it("a failed boot is reported to its users and the next user boots afresh", async () => {
    let attempt = 0;
    const { cache } = cacheWith(async () => {
      if (++attempt === 1) throw new Error("port in use");
      return { n: attempt };
    });
    await expect(cache.open(app).ready).rejects.toThrow("port in use");
    expect(cache.entry(app)).toBeUndefined();
    await expect(cache.open(app).ready).resolves.toEqual({ n: 2 });
  });
});

describe("pending questions", () => {
  it("the first answer wins and reaches the waiting request; later answers learn it is resolved", async () => {
    const questions = new PendingQuestions<string, string>();
    const waiting = questions.ask("q1", "s1", "may I?", 0);
    expect(questions.answer("q1", "allow")).toBe(true);
    expect(questions.answer("q1", "deny")).toBe(false);
    expect(await waiting).toEqual({ outcome: "answered", answer: "allow" });
  });

  it("cancels one or all, with a reason", async () => {
    const questions = new PendingQuestions<string, string>();
    const a = questions.ask("a", "s1", "?", 0);
    const b = questions.ask("b", "s2", "?", 0);
    expect(questions.cancel("a", "user")).toBe(true);
    expect(questions.cancel("a", "user")).toBe(false);
    expect(questions.list().map((q) => q.id)).toEqual(["b"]);
    expect(questions.cancelAll("inactivity")).toEqual(["b"]);
    expect(await a).toEqual({ outcome: "cancelled", reason: "user" });
    expect(await b).toEqual({ outcome: "cancelled", reason: "inactivity" });
    expect(() => {
      questions.ask("c", "s1", "?", 0);
      questions.ask("c", "s1", "?", 0);
    }).toThrow(/already pending/);
  });
});
