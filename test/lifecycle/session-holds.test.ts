import { describe, expect, it } from "vitest";
import { ConnectionCleanups } from "../../src/lifecycle/connection-cleanups.js";
import { systemClock } from "../../src/lifecycle/clock.js";
import { Executions } from "../../src/lifecycle/executions.js";
import { AcquisitionFailedError, HoldsClosedError, SessionHolds, StaleHoldError } from "../../src/lifecycle/session-holds.js";
import { GRACE, holdsHarness } from "./holds-harness.js";

describe("session holds (reference: structured session hold lost during resume)", () => {
  it("last holder leaves while acquisition is pending: no clock while pending, armed on success, released exactly at the grace mark, once", async () => {
    const h = holdsHarness();
    const ticket = h.holds.hold("s1", "surface");
    expect(h.holds.state("s1")).toBe("acquiring");
    expect(ticket.release()).toBe(true);
    expect(h.clock.pendingTimers()).toBe(0);
    expect(h.holds.releaseAt("s1")).toBeUndefined();

    const start = h.clock.now();
    const child = await h.succeed(0);
    await expect(ticket.child).rejects.toBeInstanceOf(StaleHoldError);
    expect(h.holds.state("s1")).toBe("live");
    expect(h.holds.releaseAt("s1")).toBe(start + GRACE);

    await h.clock.advance(GRACE - 1);
    expect(h.releases).toEqual([]);
    await h.clock.advance(1);
    expect(h.releases).toEqual([{ sessionId: "s1", child, at: start + GRACE }]);
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toHaveLength(1);
    expect(h.holds.state("s1")).toBe("childless");
  });

  it("a turn running at late acquisition: not released at 2x grace, released one grace after the turn ends", async () => {
    const h = holdsHarness();
    const ticket = h.holds.hold("s1", "surface");
    h.beginTurn("s1");
    ticket.release();
    await h.succeed(0);
    await h.clock.advance(2 * GRACE);
    expect(h.releases).toEqual([]);
    expect(h.holds.awaitingTurnEnd("s1")).toBe(true);

    await h.clock.advance(3 * GRACE);
    expect(h.releases).toEqual([]);
    const endedAt = h.clock.now();
    await h.endTurn("s1");
    await h.clock.advance(GRACE - 1);
    expect(h.releases).toEqual([]);
    await h.clock.advance(1);
    expect(h.releases.map((r) => r.at)).toEqual([endedAt + GRACE]);
  });

  it("lists the children held live, of every session: none while acquiring, none once released", async () => {
    const h = holdsHarness();
    const one = h.holds.hold("s1", "surface");
    const two = h.holds.hold("s2", "surface");
    expect(h.holds.liveChildren()).toEqual([]);
    const first = await h.succeed(0);
    const second = await h.succeed(1);
    expect(h.holds.liveChildren()).toEqual([first, second]);
    one.release();
    await h.clock.advance(GRACE);
    expect(h.releases.map((r) => r.sessionId)).toEqual(["s1"]);
    expect(h.holds.liveChildren()).toEqual([second]);
    two.release();
  });

  it("a holder arriving during acquisition is kept", async () => {
    const h = holdsHarness();
    const first = h.holds.hold("s1", "tab");
    const second = h.holds.hold("s1", "phone");
    first.release();
    // The provider starts one child per session; every acquisition call gets it.
    const child = h.newChild();
    await h.succeed(0, child);
    await h.succeed(1, child);
    await expect(second.child).resolves.toBe(child);
    expect(h.holds.holderCount("s1")).toBe(1);
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toEqual([]);
    expect(h.holds.child("s1")).toBe(child);
  });

  it("the grace is counted on elapsed time: a step of the wall clock either way releases neither early nor late", async () => {
    const h = holdsHarness();
    const { wallNow } = h;
    for (const step of [3_600_000, -3_600_000]) {
      // Two sessions released half a grace apart: the first's release must not take the second's early.
      const first = `first ${step}`;
      const second = `second ${step}`;
      h.holds.hold(first, "a");
      h.holds.hold(second, "a");
      const firstChild = await h.succeed(h.acquisitions.length - 2);
      const secondChild = await h.succeed(h.acquisitions.length - 1);
      const start = h.clock.now();
      h.holds.release(first, "a");
      await h.clock.advance(GRACE / 2);
      h.holds.release(second, "a");
      expect(h.holds.releaseAt(second)).toBe(wallNow() + GRACE);
      h.stepWall(step);
      // Told in wall time, the release moves with the step (it fires after the same elapsed time).
      expect(h.holds.releaseAt(second)).toBe(wallNow() + GRACE);
      await h.clock.advance(GRACE / 2);
      expect(h.releases.filter((r) => r.sessionId === first || r.sessionId === second)).toEqual([
        { sessionId: first, child: firstChild, at: start + GRACE },
      ]);
      await h.clock.advance(GRACE / 2);
      expect(h.releases.filter((r) => r.sessionId === second)).toEqual([{ sessionId: second, child: secondChild, at: start + GRACE + GRACE / 2 }]);
    }
  });

  it("on the system clock, releaseAt is a whole millisecond of wall time, the same each time it is read", async () => {
    const holds = new SessionHolds<object>({
      clock: systemClock,
      releaseGraceMs: 60_000,
      turns: new Executions(systemClock),
      acquire: async () => ({}),
      stop: async () => undefined,
    });
    const ticket = holds.hold("s1", "a");
    await ticket.child;
    const before = Date.now();
    ticket.release();
    const first = holds.releaseAt("s1")!;
    expect(Number.isInteger(first)).toBe(true);
    expect(first).toBeGreaterThanOrEqual(before + 60_000 - 1);
    expect(first).toBeLessThanOrEqual(Date.now() + 60_000 + 1);
    // Read again once the wall clock has moved on: the same deadline, the same figure.
    const later = Date.now() + 5;
    while (Date.now() < later) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(holds.releaseAt("s1")).toBe(first);
    holds.close();
  });

  it("a holder returning during the grace cancels the release and gets the same child", async () => {
    const h = holdsHarness();
    const first = h.holds.hold("s1", "laptop");
    const child = await h.succeed(0);
    await expect(first.child).resolves.toBe(child);
    first.release();
    await h.clock.advance(GRACE - 1_000);
    const back = h.holds.hold("s1", "laptop");
    expect(back.incarnation).not.toBe(first.incarnation);
    await expect(back.child).resolves.toBe(child);
    expect(h.clock.pendingTimers()).toBe(0);
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toEqual([]);
    expect(h.acquisitions).toHaveLength(1);
  });

  it("adding a holder that is already there changes nothing", async () => {
    const h = holdsHarness();
    const a = h.holds.hold("s1", "tab");
    const again = h.holds.hold("s1", "tab");
    expect(again).toBe(a);
    expect(h.acquisitions).toHaveLength(1);
    expect(h.holds.holderCount("s1")).toBe(1);
  });

  it("a failed acquisition schedules nothing and holds nothing, with a clear error", async () => {
    const h = holdsHarness();
    const ticket = h.holds.hold("s1", "tab");
    await h.fail(0, "spawn demo-agent ENOENT");
    const error = await ticket.child.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AcquisitionFailedError);
    expect((error as Error).message).toBe("could not start the agent for session s1: spawn demo-agent ENOENT");
    expect(h.holds.holderCount("s1")).toBe(0);
    expect(h.holds.state("s1")).toBe("childless");
    expect(h.clock.pendingTimers()).toBe(0);
    expect(h.releases).toEqual([]);
  });

  it("disposal before a late acquisition arms nothing", async () => {
    const h = holdsHarness();
    const ticket = h.holds.hold("s1", "tab");
    ticket.release();
    h.holds.close();
    await h.succeed(0);
    await expect(ticket.child).rejects.toBeInstanceOf(HoldsClosedError);
    expect(h.clock.pendingTimers()).toBe(0);
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toEqual([]);
    expect(() => h.holds.hold("s1", "tab")).toThrow(HoldsClosedError);
  });

  it("a release after disposal arms nothing", async () => {
    const h = holdsHarness();
    const ticket = h.holds.hold("s1", "tab");
    await h.succeed(0);
    h.holds.close();
    ticket.release();
    expect(h.clock.pendingTimers()).toBe(0);
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toEqual([]);
  });

  it("a release clock armed before disposal does not fire after it", async () => {
    const h = holdsHarness();
    h.holds.hold("s1", "tab").release();
    await h.succeed(0);
    expect(h.holds.releaseAt("s1")).toBeDefined();
    h.holds.close();
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toEqual([]);
  });

  it("explicit close during acquisition still releases the late child after the grace", async () => {
    const h = holdsHarness();
    const a = h.holds.hold("s1", "tab");
    h.holds.hold("s1", "phone");
    h.holds.releaseAll("s1");
    expect(h.holds.holderCount("s1")).toBe(0);
    const child = h.newChild();
    const closedAt = h.clock.now();
    await h.succeed(0, child);
    await h.succeed(1, child);
    await expect(a.child).rejects.toBeInstanceOf(StaleHoldError);
    await h.clock.advance(GRACE);
    expect(h.releases).toEqual([{ sessionId: "s1", child, at: closedAt + GRACE }]);
  });

  it("a same-id holder that left and returned survives the old acquisition's failure (replacement finished first)", async () => {
    const h = holdsHarness();
    const old = h.holds.hold("s1", "tab");
    old.release();
    const replacement = h.holds.hold("s1", "tab");
    const child = await h.succeed(1);
    await expect(replacement.child).resolves.toBe(child);
    await h.fail(0);
    await expect(old.child).rejects.toBeInstanceOf(AcquisitionFailedError);
    expect(replacement.isCurrent()).toBe(true);
    expect(h.holds.holderCount("s1")).toBe(1);
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toEqual([]);
  });

  it("a same-id holder that left and returned survives the old acquisition's failure (replacement still pending)", async () => {
    const h = holdsHarness();
    const old = h.holds.hold("s1", "tab");
    old.release();
    const replacement = h.holds.hold("s1", "tab");
    await h.fail(0);
    expect(replacement.isCurrent()).toBe(true);
    expect(h.holds.state("s1")).toBe("acquiring");
    const child = await h.succeed(1);
    await expect(replacement.child).resolves.toBe(child);
    expect(h.holds.holderCount("s1")).toBe(1);
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toEqual([]);
  });

  it("a failed replacement is removed while the old hold is still pending; the old child is then released after the grace", async () => {
    const h = holdsHarness();
    const old = h.holds.hold("s1", "tab");
    old.release();
    const replacement = h.holds.hold("s1", "tab");
    await h.fail(1);
    await expect(replacement.child).rejects.toBeInstanceOf(AcquisitionFailedError);
    expect(h.holds.holderCount("s1")).toBe(0);
    expect(h.holds.state("s1")).toBe("acquiring");
    expect(h.clock.pendingTimers()).toBe(0);

    const child = await h.succeed(0);
    await expect(old.child).rejects.toBeInstanceOf(StaleHoldError);
    await h.clock.advance(GRACE);
    expect(h.releases.map((r) => r.child)).toEqual([child]);
  });

  it("the old acquisition succeeds and the replacement fails: the clock is armed, waits for the turn, releases once", async () => {
    const h = holdsHarness();
    const old = h.holds.hold("s1", "tab");
    h.beginTurn("s1");
    old.release();
    const replacement = h.holds.hold("s1", "tab");
    const child = await h.succeed(0);
    await expect(old.child).rejects.toBeInstanceOf(StaleHoldError);
    expect(h.holds.releaseAt("s1")).toBeUndefined();

    await h.fail(1);
    await expect(replacement.child).rejects.toBeInstanceOf(AcquisitionFailedError);
    expect(h.holds.releaseAt("s1")).toBe(h.clock.now() + GRACE);
    await h.clock.advance(3 * GRACE);
    expect(h.releases).toEqual([]);
    await h.endTurn("s1");
    await h.clock.advance(GRACE);
    expect(h.releases.map((r) => r.child)).toEqual([child]);
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toHaveLength(1);
  });

  it("a child lost on its own leaves the holders and a childless session; a new hold acquires again", async () => {
    const h = holdsHarness();
    const ticket = h.holds.hold("s1", "tab");
    const child = await h.succeed(0);
    h.holds.childLost("s1", child);
    expect(h.holds.state("s1")).toBe("childless");
    expect(ticket.isCurrent()).toBe(true);
    ticket.release();
    await h.clock.advance(10 * GRACE);
    expect(h.releases).toEqual([]);
    h.holds.hold("s1", "tab");
    expect(h.acquisitions).toHaveLength(2);
  });

  it("a surplus child from a second acquisition is released at once and never becomes the session's child", async () => {
    const h = holdsHarness();
    const a = h.holds.hold("s1", "a");
    const b = h.holds.hold("s1", "b");
    const first = await h.succeed(0);
    const surplus = await h.succeed(1);
    await expect(a.child).resolves.toBe(first);
    await expect(b.child).resolves.toBe(first);
    expect(h.releases.map((r) => r.child)).toEqual([surplus]);
    expect(h.holds.child("s1")).toBe(first);
  });

  it("a new holder while the old child is being released waits for that release before acquiring", async () => {
    const h = holdsHarness();
    h.holds.hold("s1", "a").release();
    await h.succeed(0);
    await h.clock.advance(GRACE);
    expect(h.releases).toHaveLength(1);
    const again = h.holds.hold("s1", "a");
    await h.clock.advance(0);
    const child = await h.succeed(1);
    await expect(again.child).resolves.toBe(child);
  });
});

describe("connection cleanups", () => {
  it("a connection's close releases all its holds", async () => {
    const h = holdsHarness();
    const cleanups = new ConnectionCleanups();
    for (const sessionId of ["s1", "s2"]) {
      const ticket = h.holds.hold(sessionId, "conn-1");
      cleanups.register(`conn-1/${sessionId}`, () => void ticket.release(), "conn-1");
    }
    await h.succeed(0);
    await h.succeed(1);
    expect(h.holds.holderCount("s1") + h.holds.holderCount("s2")).toBe(2);
    await cleanups.cleanupForConnection("conn-1");
    expect(h.holds.holderCount("s1") + h.holds.holderCount("s2")).toBe(0);
    expect(cleanups.size()).toBe(0);
    await h.clock.advance(GRACE);
    expect(h.releases.map((r) => r.sessionId).sort()).toEqual(["s1", "s2"]);
  });

  it("a socket that closes while its hold is still acquiring releases it (cleanup registered before awaiting)", async () => {
    const h = holdsHarness();
    const cleanups = new ConnectionCleanups();
    const ticket = h.holds.hold("s1", "conn-1");
    cleanups.register("conn-1/s1", () => void ticket.release(), "conn-1");
    await cleanups.cleanupForConnection("conn-1");
    await h.succeed(0);
    await expect(ticket.child).rejects.toBeInstanceOf(StaleHoldError);
    await h.clock.advance(GRACE);
    expect(h.releases).toHaveLength(1);
  });

  it("an old connection's cleanup never removes a replacement's", async () => {
    const h = holdsHarness();
    const cleanups = new ConnectionCleanups();
    // The old connection registers its cleanup, then awaits a hold that will fail.
    const oldTicket = h.holds.hold("s1", "client-7");
    const oldRegistration = cleanups.register("client-7/s1", () => void oldTicket.release(), "conn-old");
    // The client reconnects under the same id; registering runs the old cleanup first.
    const newTicket = h.holds.hold("s1", "client-7");
    expect(newTicket).toBe(oldTicket);
    oldTicket.release();
    const replacement = h.holds.hold("s1", "client-7");
    const newRegistration = cleanups.register("client-7/s1", () => void replacement.release(), "conn-new");
    await newRegistration.replaced;

    await h.fail(0);
    // The old RPC handler's failure path: it may only unregister its own cleanup.
    expect(oldRegistration.releaseIfCurrent()).toBe(false);
    expect(newRegistration.isCurrent()).toBe(true);
    expect(replacement.isCurrent()).toBe(true);
    await cleanups.cleanupForConnection("conn-old");
    expect(replacement.isCurrent()).toBe(true);

    const child = await h.succeed(1);
    await expect(replacement.child).resolves.toBe(child);
    await cleanups.cleanupForConnection("conn-new");
    expect(h.holds.holderCount("s1")).toBe(0);
    await h.clock.advance(GRACE);
    expect(h.releases.map((r) => r.child)).toEqual([child]);
  });

  it("re-registering an id runs the old cleanup first", async () => {
    const cleanups = new ConnectionCleanups();
    const ran: string[] = [];
    cleanups.register("x", () => void ran.push("first"), "c1");
    const second = cleanups.register("x", () => void ran.push("second"), "c1");
    await second.replaced;
    expect(ran).toEqual(["first"]);
    await cleanups.cleanupForConnection("c1");
    expect(ran).toEqual(["first", "second"]);
  });

  it("a failing cleanup is reported and the others still run", async () => {
    const errors: string[] = [];
    const cleanups = new ConnectionCleanups((_error, id) => errors.push(id));
    const ran: string[] = [];
    cleanups.register(
      "a",
      () => {
        throw new Error("boom");
      },
      "c1",
    );
    cleanups.register("b", () => void ran.push("b"), "c1");
    await cleanups.cleanupForConnection("c1");
    expect(errors).toEqual(["a"]);
    expect(ran).toEqual(["b"]);
  });
});
