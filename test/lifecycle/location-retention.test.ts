import { describe, expect, it } from "vitest";
import { locationKey } from "../../src/lifecycle/location-key.js";
import { HOUR, MINUTE, retentionHarness } from "./retention-harness.js";

const app = locationKey("/w/app");
const appOtherWorkspace = locationKey("/w/app", "other");

describe("location retention (reference: keep locations alive while sessions are executing, 24h cap)", () => {
  it("long tool call: a 3-hour silent tool call keeps its location while an idle workspace in the same directory is evicted", async () => {
    const h = retentionHarness();
    await h.retention.open(appOtherWorkspace);
    const turn = await h.silentToolCall("s1", app);

    await h.clock.advance(63 * MINUTE);
    expect(h.executions.isActive("s1")).toBe(true);
    expect(h.retention.peek(app)).toBe(turn.services);
    expect(h.interruptions()).toEqual([]);
    expect(h.retention.peek(appOtherWorkspace)).toBeUndefined();
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: "other", reason: "idle" }]);

    await h.clock.advance(119 * MINUTE - 63 * MINUTE);
    expect(h.executions.isActive("s1")).toBe(true);
    expect(h.retention.peek(app)).toBe(turn.services);
    expect(h.interruptions()).toEqual([]);

    await h.clock.advance(3 * HOUR - 119 * MINUTE);
    turn.finish();
    const settlement = await turn.settled;
    expect(settlement.outcome).toBe("completed");
    expect(settlement.reason).toBeUndefined();

    await h.clock.advance(55 * MINUTE);
    expect(h.retention.peek(app)).toBe(turn.services);
    expect(turn.services.closed).toBe(false);

    await h.clock.advance(6 * MINUTE);
    await h.retention.whenSettled();
    expect(h.retention.peek(app)).toBeUndefined();
    expect(turn.services.closed).toBe(true);
    expect(turn.services.closeCalls).toBe(1);
    expect(h.evictions().filter((r) => r.workspace === undefined)).toEqual([
      { kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "idle" },
    ]);
    expect(h.interruptions()).toEqual([]);
  });

  for (const step of [2 * HOUR, -2 * HOUR, 25 * HOUR]) {
    it(`the idle TTL and the cap are counted on elapsed time: a step of the wall clock (${step / HOUR} h) evicts and interrupts neither early nor late; status tells wall time`, async () => {
      const h = retentionHarness();
      await h.retention.open(appOtherWorkspace);
      const turn = await h.silentToolCall("s1", app);
      const start = h.clock.now();
      await h.clock.advance(30 * MINUTE);
      h.stepWall(step);
      expect(h.retention.status(appOtherWorkspace)!.expiresAt).toBe(h.wallNow() + 30 * MINUTE);
      expect(h.retention.status(app)).toMatchObject({ activeAt: start + step, capAt: start + step + 24 * HOUR });

      // The idle location goes after its idle TTL of elapsed time, not before, not later.
      await h.clock.advance(29 * MINUTE);
      expect(h.retention.peek(appOtherWorkspace)).toBeDefined();
      await h.clock.advance(2 * MINUTE);
      expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: "other", reason: "idle" }]);

      // The silent tool call is interrupted at the cap of elapsed time.
      await h.clock.advance(24 * HOUR - 63 * MINUTE);
      expect(h.interruptions()).toEqual([]);
      expect(h.executions.isActive("s1")).toBe(true);
      await h.clock.advance(4 * MINUTE);
      expect(h.interruptions()).toMatchObject([{ kind: "session_interrupted", sessionId: "s1", reason: "inactivity" }]);
      turn.finish();
    });
  }

  for (const sessions of [1, 2]) {
    it(`unanswered questions (${sessions} session${sessions > 1 ? "s" : ""}): kept for over 3 hours, answered later by the same service`, async () => {
      const h = retentionHarness();
      const turns = [];
      for (let i = 1; i <= sessions; i++) turns.push(await h.questionTurn(`s${i}`, app, `q${i}`));

      await h.clock.advance(3 * HOUR + 10 * MINUTE);
      expect(h.interruptions()).toEqual([]);
      const cached = h.retention.peek(app);
      for (const turn of turns) {
        expect(cached).toBe(turn.services);
        expect(h.executions.isActive(turn.sessionId)).toBe(true);
      }
      expect(cached!.questions.list().map((q) => q.id)).toEqual(turns.map((_, i) => `q${i + 1}`));

      for (const [i, turn] of turns.entries()) {
        expect(cached!.questions.answer(`q${i + 1}`, "allow")).toBe(true);
        expect(await turn.outcome()).toEqual({ outcome: "answered", answer: "allow" });
        expect((await turn.settled).outcome).toBe("completed");
      }

      await h.clock.advance(59 * MINUTE);
      expect(h.retention.peek(app)).toBe(cached);
      await h.clock.advance(2 * MINUTE);
      await h.retention.whenSettled();
      expect(h.retention.peek(app)).toBeUndefined();
      expect(cached!.closed).toBe(true);
      expect(h.evictions()).toHaveLength(1);
      expect(h.interruptions()).toEqual([]);
    });
  }

  for (const sessions of [1, 2]) {
    it(`24-hour cap (${sessions} session${sessions > 1 ? "s" : ""}): alive at 23h; just after 24h interrupted for inactivity, questions cancelled, slow cleanup still owns the services, then evicted`, async () => {
      const h = retentionHarness({ slowClose: true });
      const turns = [];
      for (let i = 1; i <= sessions; i++) {
        turns.push(await h.questionTurn(`s${i}`, app, `q${i}`, { settleDelayMs: 5 * MINUTE }));
      }
      const services = turns[0]!.services;

      await h.clock.advance(23 * HOUR);
      expect(h.interruptions()).toEqual([]);
      expect(services.questions.list()).toHaveLength(sessions);
      expect(h.retention.peek(app)).toBe(services);

      await h.clock.advance(1 * HOUR + 1 * MINUTE);
      expect(h.interruptions()).toEqual(
        turns.map((t) => ({ kind: "session_interrupted", sessionId: t.sessionId, directory: "/w/app", workspace: undefined, reason: "inactivity" })),
      );
      for (const turn of turns) expect(await turn.outcome()).toEqual({ outcome: "cancelled", reason: "inactivity" });
      // The interrupted tools are still winding down: the services are owned by the cleanup, not stopped.
      expect(h.retention.status(app)?.state).toBe("interrupting");
      expect(h.retention.peek(app)).toBe(services);
      expect(services.closeCalls).toBe(0);
      expect(h.evictions()).toEqual([]);

      await h.clock.advance(5 * MINUTE);
      for (const turn of turns) expect(await turn.settled).toMatchObject({ outcome: "interrupted", reason: "inactivity" });
      // Closing is slow too: eviction is recorded only once every stop has been awaited.
      expect(h.retention.status(app)?.state).toBe("evicting");
      expect(services.closeCalls).toBe(1);
      expect(services.closed).toBe(false);
      expect(h.evictions()).toEqual([]);

      h.closeGate.resolve();
      await h.retention.whenSettled();
      expect(services.closed).toBe(true);
      expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "inactivity" }]);
      expect(h.retention.status(app)).toBeUndefined();
    });
  }

  it("24-hour cap: work admitted during cleanup in another session keeps the location", async () => {
    const h = retentionHarness();
    const first = await h.silentToolCall("s1", app, { settleDelayMs: 5 * MINUTE });
    await h.clock.advance(24 * HOUR + 1 * MINUTE);
    expect(h.retention.status(app)?.state).toBe("interrupting");

    const admitted = await h.silentToolCall("s2", app);
    expect(admitted.services).toBe(first.services);
    await h.clock.advance(5 * MINUTE);
    expect((await first.settled).reason).toBe("inactivity");
    await h.retention.whenSettled();

    expect(h.executions.isActive("s2")).toBe(true);
    expect(h.retention.status(app)?.state).toBe("retained");
    expect(h.retention.peek(app)).toBe(first.services);
    expect(first.services.closeCalls).toBe(0);
    expect(h.evictions()).toEqual([]);
    expect(h.records.filter((r) => r.kind === "location_kept")).toHaveLength(1);
    expect(h.interruptions().map((r) => r.kind === "session_interrupted" && r.sessionId)).toEqual(["s1"]);
  });

  it("24-hour cap: work admitted during cleanup in the same session keeps the location", async () => {
    const h = retentionHarness();
    const quick = await h.silentToolCall("s1", app);
    const slow = await h.silentToolCall("s2", app, { settleDelayMs: 5 * MINUTE });
    await h.clock.advance(24 * HOUR + 1 * MINUTE);
    expect((await quick.settled).reason).toBe("inactivity");
    expect(h.retention.status(app)?.state).toBe("interrupting");

    // s1 was interrupted and settled; it is prompted again while s2 is still winding down.
    await h.silentToolCall("s1", app);
    await h.clock.advance(5 * MINUTE);
    expect((await slow.settled).reason).toBe("inactivity");
    await h.retention.whenSettled();

    expect(h.executions.isActive("s1")).toBe(true);
    expect(h.retention.status(app)?.state).toBe("retained");
    expect(h.evictions()).toEqual([]);
    expect(quick.services.closeCalls).toBe(0);
  });

  it("reset: a durable event at hour 20 keeps the session past hour 24 up to hour 43; it is interrupted and evicted 24 silent hours after that event", async () => {
    const h = retentionHarness();
    const turn = await h.silentToolCall("s1", app);

    await h.clock.advance(20 * HOUR);
    expect(h.retention.touch(app)).toBe(true);

    await h.clock.advance(4 * HOUR + 1 * MINUTE);
    expect(h.interruptions()).toEqual([]);
    expect(h.retention.peek(app)).toBe(turn.services);
    await h.clock.advance(43 * HOUR - (24 * HOUR + 1 * MINUTE));
    expect(h.interruptions()).toEqual([]);
    expect(h.executions.isActive("s1")).toBe(true);
    expect(h.retention.status(app)?.capAt).toBe(h.clock.now() + 1 * HOUR);

    await h.clock.advance(1 * HOUR);
    await h.retention.whenSettled();
    expect(h.interruptions()).toHaveLength(1);
    expect((await turn.settled).reason).toBe("inactivity");
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "inactivity" }]);
  });

  it("reading never boots: peek and status of a location that is not loaded start nothing", async () => {
    const h = retentionHarness();
    expect(h.retention.peek(app)).toBeUndefined();
    expect(h.retention.status(app)).toBeUndefined();
    expect(h.retention.touch(app)).toBe(false);
    expect(h.retention.list()).toEqual([]);
    expect(h.cache.entries()).toEqual([]);
    expect(h.records).toEqual([]);
  });

  it("idle expiry is one TTL from the last durable event, seen by the next sweep", async () => {
    const h = retentionHarness();
    const services = await h.retention.open(app);
    await h.clock.advance(30 * MINUTE);
    h.retention.touch(app);
    await h.clock.advance(59 * MINUTE);
    expect(h.retention.peek(app)).toBe(services);
    await h.clock.advance(1 * MINUTE);
    await h.retention.whenSettled();
    expect(h.retention.peek(app)).toBeUndefined();
    expect(h.evictions()).toHaveLength(1);
  });

  it("a location booted again after eviction is a new entry: the old eviction cannot touch it", async () => {
    const h = retentionHarness({ slowClose: true });
    const first = await h.retention.open(app);
    await h.clock.advance(60 * MINUTE);
    expect(h.retention.status(app)?.state).toBe("evicting");
    const reopened = h.retention.open(app);
    h.closeGate.resolve();
    const second = await reopened;
    await h.retention.whenSettled();
    expect(second).not.toBe(first);
    expect(first.closed).toBe(true);
    expect(second.closed).toBe(false);
    expect(h.retention.peek(app)).toBe(second);
    expect(h.retention.status(app)?.state).toBe("retained");
  });
});

describe("issue 13: the cap holds against real needs, and the re-check sees acquisitions", () => {
  it("L3: an acquisition every 50 minutes cannot keep a silent location past its cap", async () => {
    const h = retentionHarness();
    const turn = await h.silentToolCall("s1", app);
    const capAt = h.retention.status(app)!.capAt;
    // Another session's agent (re)starts at the location every 50 minutes: a real need, not progress.
    for (let t = 50 * MINUTE; t < 26 * HOUR; t += 50 * MINUTE) {
      await h.clock.advanceTo(capAt - 24 * HOUR + t);
      if (h.retention.status(app)?.state !== "retained") break;
      await h.retention.open(app);
      expect(h.retention.status(app)!.expiresAt).toBeLessThanOrEqual(capAt);
    }
    await h.clock.advanceTo(capAt + 1 * MINUTE);
    await h.retention.whenSettled();
    expect(h.interruptions()).toHaveLength(1);
    expect((await turn.settled).reason).toBe("inactivity");
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "inactivity" }]);
  });

  it("L4: an agent still starting for another session when the capped location's turns settle keeps the location", async () => {
    const h = retentionHarness();
    const first = await h.silentToolCall("s1", app, { settleDelayMs: 5 * MINUTE });
    await h.clock.advance(24 * HOUR + 1 * MINUTE);
    expect(h.retention.status(app)?.state).toBe("interrupting");

    // A prompt for s2: its agent is being acquired (the host's acquisition wraps exactly this need).
    const need = h.retention.beginNeed(app);
    const services = await h.retention.open(app);
    expect(services).toBe(first.services);
    await h.clock.advance(5 * MINUTE);
    expect((await first.settled).reason).toBe("inactivity");
    await h.retention.whenSettled();
    // The agent finished starting after the cleanup: its services are still the location's.
    need.end(true);
    expect(h.retention.peek(app)).toBe(services);
    expect(h.retention.status(app)?.state).toBe("retained");
    expect(services.closeCalls).toBe(0);
    expect(h.evictions()).toEqual([]);
    expect(h.records.filter((r) => r.kind === "location_kept")).toHaveLength(1);
    const second = await h.silentToolCall("s2", app);
    expect(second.services).toBe(services);
  });

  it("L4: an acquisition that succeeded during cleanup keeps the location even before its turn begins", async () => {
    const h = retentionHarness();
    const first = await h.silentToolCall("s1", app, { settleDelayMs: 5 * MINUTE });
    await h.clock.advance(24 * HOUR + 1 * MINUTE);
    const need = h.retention.beginNeed(app);
    await h.retention.open(app);
    need.end(true);
    need.end(false); // ending twice changes nothing
    await h.clock.advance(5 * MINUTE);
    await first.settled;
    await h.retention.whenSettled();
    expect(h.retention.status(app)?.state).toBe("retained");
    expect(h.evictions()).toEqual([]);
  });

  it("L4: an acquisition that failed during cleanup does not keep the location", async () => {
    const h = retentionHarness();
    const first = await h.silentToolCall("s1", app, { settleDelayMs: 5 * MINUTE });
    await h.clock.advance(24 * HOUR + 1 * MINUTE);
    const need = h.retention.beginNeed(app);
    await h.retention.open(app);
    need.end(false);
    await h.clock.advance(5 * MINUTE);
    await first.settled;
    await h.retention.whenSettled();
    expect(h.retention.status(app)).toBeUndefined();
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "inactivity" }]);
  });

  it("a need in flight is never evicted as idle, even past the cap; once it ends the location idles out", async () => {
    const h = retentionHarness();
    const services = await h.retention.open(app);
    const need = h.retention.beginNeed(app);
    await h.clock.advance(25 * HOUR);
    await h.retention.whenSettled();
    expect(h.retention.peek(app)).toBe(services);
    expect(h.evictions()).toEqual([]);
    need.end(false);
    const keptUntil = h.retention.status(app)!.expiresAt;
    await h.clock.advanceTo(keptUntil + 1 * MINUTE);
    await h.retention.whenSettled();
    expect(h.retention.peek(app)).toBeUndefined();
    expect(h.evictions()).toHaveLength(1);
  });
});

describe("issue 13: held but idle (evictHeld off), slices, closed cache", () => {
  it("a held location with no turn stays retained past its idle TTL, and is evicted for inactivity at the cap", async () => {
    const held = new Set<string>([app.id]);
    const h = retentionHarness({ isHeld: (key) => held.has(key.id) });
    const services = await h.retention.open(app);
    await h.retention.open(appOtherWorkspace);
    await h.clock.advance(3 * HOUR);
    expect(h.retention.peek(app)).toBe(services);
    // Only the held one: the idle sibling expired on its own schedule.
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: "other", reason: "idle" }]);
    expect(h.retention.status(app)!.expiresAt).toBeLessThanOrEqual(h.retention.status(app)!.capAt);
    await h.clock.advance(21 * HOUR - 2 * MINUTE);
    expect(h.retention.peek(app)).toBe(services);
    await h.clock.advance(3 * MINUTE);
    await h.retention.whenSettled();
    expect(h.retention.peek(app)).toBeUndefined();
    expect(h.evictions().at(-1)).toEqual({ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "inactivity" });
    expect(h.closeReasons).toEqual(["idle", "inactivity"]);
  });

  it("a location no longer held idles out one TTL after its last durable event", async () => {
    let held = true;
    const h = retentionHarness({ isHeld: () => held });
    await h.retention.open(app);
    await h.clock.advance(2 * HOUR);
    expect(h.retention.status(app)?.state).toBe("retained");
    held = false;
    // The deadline kept while it was held runs out; nothing refreshes it any more.
    await h.clock.advance(61 * MINUTE);
    await h.retention.whenSettled();
    expect(h.retention.status(app)).toBeUndefined();
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "idle" }]);
  });

  it("without isHeld (evictHeld on) a held location is evicted on its idle TTL like any other", async () => {
    const h = retentionHarness();
    await h.retention.open(app);
    await h.clock.advance(61 * MINUTE);
    await h.retention.whenSettled();
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "idle" }]);
  });

  it("a mass expiry is handled in slices: a sweep never handles more than one slice synchronously", async () => {
    const h = retentionHarness({ sweepSliceSize: 100 });
    h.retention.stop();
    for (let i = 0; i < 250; i++) await h.retention.open(locationKey(`/w/many/${i}`));
    await h.clock.advance(61 * MINUTE);
    h.retention.sweep();
    expect(h.retention.list().filter((s) => s.state === "evicting")).toHaveLength(100);
    h.retention.sweep(); // a sweep while slices are pending starts no second chain
    expect(h.retention.list().filter((s) => s.state === "evicting")).toHaveLength(100);
    // The rest follow on later turns of the event loop (a 0 ms timer of the injected clock each).
    await h.clock.advance(0);
    await h.retention.whenSettled();
    expect(h.evictions()).toHaveLength(250);
  });
});

describe("issue 13: needs, slices and stop, in detail", () => {
  it("two needs at one location: ending one still protects the location until the other ends", async () => {
    const h = retentionHarness();
    await h.retention.open(app);
    const first = h.retention.beginNeed(app);
    const second = h.retention.beginNeed(app);
    first.end(false);
    first.end(false); // a second end of the same need does not end the other one
    await h.clock.advance(3 * HOUR);
    expect(h.retention.status(app)?.state).toBe("retained");
    expect(h.evictions()).toEqual([]);
    second.end(false);
    await h.clock.advance(61 * MINUTE);
    await h.retention.whenSettled();
    expect(h.evictions()).toHaveLength(1);
  });

  it("a need at one location does not protect another", async () => {
    const h = retentionHarness();
    await h.retention.open(app);
    await h.retention.open(appOtherWorkspace);
    h.retention.beginNeed(appOtherWorkspace);
    await h.clock.advance(61 * MINUTE);
    await h.retention.whenSettled();
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "idle" }]);
  });

  it("slices default to 1,000 locations", async () => {
    const h = retentionHarness();
    h.retention.stop();
    for (let i = 0; i < 1_001; i++) await h.retention.open(locationKey(`/w/many/${i}`));
    await h.clock.advance(61 * MINUTE);
    h.retention.sweep();
    expect(h.retention.list().filter((s) => s.state === "evicting")).toHaveLength(1_000);
    await h.clock.advance(0);
    await h.retention.whenSettled();
    expect(h.evictions()).toHaveLength(1_001);
  });

  it("whenSettled waits for the remaining slices; stop() cancels them", async () => {
    const h = retentionHarness({ sweepSliceSize: 10 });
    h.retention.stop();
    for (let i = 0; i < 25; i++) await h.retention.open(locationKey(`/w/many/${i}`));
    await h.clock.advance(61 * MINUTE);
    h.retention.sweep();
    let settled = false;
    const waiting = h.retention.whenSettled().then(() => (settled = true));
    await h.clock.advance(0);
    await waiting;
    expect(settled).toBe(true);
    expect(h.evictions()).toHaveLength(25);

    for (let i = 0; i < 25; i++) await h.retention.open(locationKey(`/w/more/${i}`));
    await h.clock.advance(61 * MINUTE);
    h.retention.sweep();
    h.retention.stop();
    await h.clock.advance(0);
    await h.retention.whenSettled();
    expect(h.evictions()).toHaveLength(35);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it("a held location past its cap with an active turn takes the cap path: interrupted, then evicted", async () => {
    const h = retentionHarness({ isHeld: () => true });
    const turn = await h.silentToolCall("s1", app);
    await h.clock.advance(24 * HOUR + 1 * MINUTE);
    await h.retention.whenSettled();
    expect((await turn.settled).reason).toBe("inactivity");
    expect(h.evictions()).toEqual([{ kind: "location_evicted", directory: "/w/app", workspace: undefined, reason: "inactivity" }]);
  });
});
