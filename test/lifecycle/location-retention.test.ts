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
    expect(h.evictions()).toEqual([
      { kind: "location_evicted", directory: "/w/app", workspace: "other", reason: "idle" },
    ]);

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
