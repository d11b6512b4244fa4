import fc from "fast-check";
import { describe, it } from "vitest";
import { ConnectionCleanups } from "../../src/lifecycle/connection-cleanups.js";
import { Executions, type TurnHandle } from "../../src/lifecycle/executions.js";
import { locationKey } from "../../src/lifecycle/location-key.js";
import { SessionHolds, type HoldTicket } from "../../src/lifecycle/session-holds.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { drainMicrotasks, ModelStats, modelRuns } from "../support/model-budget.js";

const GRACE = 15_000;
const SESSIONS = ["s1", "s2"] as const;
const CONNECTIONS = ["c1", "c2", "c3"] as const;
type SessionId = (typeof SESSIONS)[number];
type ConnectionId = (typeof CONNECTIONS)[number];
/** Sequences of realistic length: a connection holds, prompts, leaves and comes back many times. */
const MAX_COMMANDS = 120;

interface Child {
  readonly serial: number;
  readonly sessionId: string;
}

const stats = new ModelStats("session holds");
/** The run the scheduler's `act` checks after every scheduled step. */
let current: Real | undefined;

/** The real kernel, with every acquisition and release resolved when fast-check's scheduler says so. */
class Real {
  /** One event-loop turn settles the kernel after each timer: it has no I/O. */
  readonly clock = new VirtualClock(0, 1);
  readonly executions = new Executions(this.clock);
  readonly cleanups = new ConnectionCleanups();
  /** Each session's prompts in flight, oldest first: a prompt during a turn joins it (agents queue it). */
  readonly turns = new Map<string, TurnHandle[]>();
  readonly tickets = new Map<string, HoldTicket<Child>>();
  readonly releases: Array<{ child: Child; at: number }> = [];
  /** Session children whose release was asked for but has not finished. */
  readonly stopping = new Set<Child>();
  /** Every child an acquisition produced. */
  readonly acquired = new Set<Child>();
  /** Children that exited on their own (nothing to release). */
  readonly lost = new Set<Child>();
  readonly violations: string[] = [];
  private readonly inflight = new Map<string, Promise<Child>>();
  readonly holds: SessionHolds<Child>;
  closedWithReleases: number | undefined;
  private serial = 0;

  constructor(
    readonly scheduler: fc.Scheduler,
    private readonly outcomes: boolean[],
  ) {
    this.holds = new SessionHolds<Child>({
      clock: this.clock,
      releaseGraceMs: GRACE,
      turns: this.executions,
      acquire: (sessionId) => {
        if (this.closedWithReleases !== undefined) this.violations.push(`${sessionId} acquired after close`);
        // One agent process per session: a new child starts only once the previous one has stopped.
        for (const child of this.stopping) {
          if (child.sessionId === sessionId && this.holds.state(sessionId) !== "live") {
            this.violations.push(`${sessionId} starts a child while child ${child.serial} is still stopping`);
          }
        }
        // Single-flight per session, as the host's acquirer is: concurrent acquisitions share one start.
        const inflight = this.inflight.get(sessionId);
        if (inflight) return inflight;
        const succeeds = this.outcomes.shift() ?? true;
        const child = { serial: ++this.serial, sessionId };
        const acquisition = this.scheduler
          .schedule(Promise.resolve(), `acquire ${sessionId} -> ${succeeds ? `child ${child.serial}` : "failure"}`)
          .then(() => {
            if (!succeeds) throw new Error("agent failed to start");
            this.acquired.add(child);
            return child;
          })
          .finally(() => this.inflight.delete(sessionId));
        this.inflight.set(sessionId, acquisition);
        return acquisition;
      },
      stop: (sessionId, child) => {
        // The session's own child (not a surplus one, which a single-flight acquirer never produces) must stop before the next starts.
        if (this.onRelease(sessionId, child)) this.stopping.add(child);
        return this.scheduler.schedule(Promise.resolve(), `release child ${child.serial}`).then(() => void this.stopping.delete(child));
      },
    });
  }

  private onRelease(sessionId: string, child: Child): boolean {
    if (this.releases.some((r) => r.child === child)) this.violations.push(`child ${child.serial} released twice`);
    if (this.closedWithReleases !== undefined) this.violations.push(`child ${child.serial} released after close`);
    if (!this.acquired.has(child)) this.violations.push(`child ${child.serial} released but never acquired`);
    // A surplus child (a second acquisition's) is released while the session keeps its own; only the session's child obeys holds.
    const isSessionChild = this.holds.state(sessionId) === "releasing";
    if (isSessionChild && this.holds.holderCount(sessionId) > 0) this.violations.push(`child ${child.serial} released while held`);
    if (isSessionChild && this.executions.isActive(sessionId)) this.violations.push(`child ${child.serial} released during a turn`);
    if (!isSessionChild && this.holds.child(sessionId) === child) this.violations.push(`child ${child.serial} released while it is the session's`);
    this.releases.push({ child, at: this.clock.now() });
    return isSessionChild;
  }

  /** The invariants that must hold whenever the kernel is quiescent: between commands and after every scheduled step. */
  check(): void {
    if (this.violations.length > 0) throw new Error(this.violations.join("; "));
    if (this.closedWithReleases !== undefined) {
      if (this.clock.pendingTimers() > 0) throw new Error("a timer is pending after close");
      return;
    }
    for (const s of SESSIONS) {
      const state = this.holds.state(s);
      const child = this.holds.child(s);
      if ((state === "live") !== (child !== undefined)) throw new Error(`${s} is ${state} but its child is ${child?.serial}`);
      if (child && !this.acquired.has(child)) throw new Error(`${s} has child ${child.serial} that no acquisition produced`);
      if (child && this.releases.some((r) => r.child === child)) throw new Error(`${s} keeps child ${child.serial} after releasing it`);
      if (child && this.lost.has(child)) throw new Error(`${s} keeps child ${child.serial} after it exited`);
      const holders = this.holds.holderCount(s);
      if (holders > 0 && this.holds.releaseAt(s) !== undefined) throw new Error(`${s} is held but its release clock runs`);
      if (holders > 0 && this.holds.awaitingTurnEnd(s)) throw new Error(`${s} is held but waits to release`);
      if (state !== "live" || holders > 0) continue;
      // A live child with no holder always has its release clock running (or waits for its turn).
      const releaseAt = this.holds.releaseAt(s);
      if (this.holds.awaitingTurnEnd(s)) {
        if (!this.executions.isActive(s)) throw new Error(`${s} waits for a turn that is not running`);
      } else if (releaseAt === undefined) {
        throw new Error(`${s} has a live child, no holder and no release clock`);
      } else if (releaseAt > this.clock.now() + GRACE || releaseAt < this.clock.now()) {
        throw new Error(`${s} release clock at ${releaseAt} is outside the grace from ${this.clock.now()}`);
      }
    }
  }
}

type Command = fc.AsyncCommand<Record<string, never>, Real>;

const step = (name: string, run: (real: Real) => unknown): Command => stats.step(name, run);

const sessionArb = fc.constantFrom<SessionId>(...SESSIONS);
const connectionArb = fc.constantFrom<ConnectionId>(...CONNECTIONS);

const commandArbs = [
  fc.tuple(sessionArb, connectionArb).map(([s, c]) =>
    step(`hold(${s}, ${c})`, (real) => {
      if (real.closedWithReleases !== undefined) return;
      const ticket = real.holds.hold(s, c);
      real.tickets.set(`${c}/${s}`, ticket);
      // As the server does: the cleanup is registered before the hold is awaited.
      real.cleanups.register(`${c}/${s}`, () => void ticket.release(), c);
    }),
  ),
  fc.tuple(sessionArb, connectionArb).map(([s, c]) => step(`release(${s}, ${c})`, (real) => real.holds.release(s, c))),
  // A stale ticket (an earlier incarnation) releasing: must never remove the current one.
  fc.tuple(sessionArb, connectionArb).map(([s, c]) =>
    step(`staleTicketRelease(${s}, ${c})`, (real) => {
      const ticket = real.tickets.get(`${c}/${s}`);
      if (!ticket || ticket.isCurrent()) return;
      const before = real.holds.holderIds(s).includes(c);
      if (ticket.release()) throw new Error(`a stale ticket of ${c} on ${s} released`);
      if (real.holds.holderIds(s).includes(c) !== before) throw new Error(`a stale ticket of ${c} changed ${s}'s holders`);
    }),
  ),
  connectionArb.map((c) => step(`connectionClosed(${c})`, (real) => real.cleanups.cleanupForConnection(c))),
  // Turns are admitted in every state: with or without a child, held or not, while acquiring or releasing; a prompt
  // during a turn joins it, and the turn runs until its last prompt is answered.
  sessionArb.map((s) =>
    step(`turnStart(${s})`, (real) => {
      real.turns.set(s, [...(real.turns.get(s) ?? []), real.executions.begin(s, locationKey("/w/app"), () => undefined)]);
    }),
  ),
  sessionArb.map((s) => step(`turnEnd(${s})`, (real) => real.turns.get(s)?.shift()?.settle("completed"))),
  sessionArb.map((s) => step(`releaseAll(${s})`, (real) => real.holds.releaseAll(s))),
  sessionArb.map((s) =>
    step(`childCrashed(${s})`, (real) => {
      const child = real.holds.child(s);
      if (!child) return;
      real.lost.add(child);
      real.holds.childLost(s, child);
    }),
  ),
  fc.constantFrom(1_000, GRACE - 1, GRACE, 3 * GRACE).map((ms) => step(`advance(${ms})`, (real) => real.clock.advance(ms))),
  fc.constant(
    step("resolveOne", async (real) => {
      if (real.scheduler.count() > 0) await real.scheduler.waitOne();
    }),
  ),
  fc.constant(
    step("resolveAll", async (real) => {
      await real.scheduler.waitIdle();
    }),
  ),
];
// Dispose ends everything: it is rare, as in production (host shutdown), so most runs go on long after their first steps.
commandArbs.push(
  fc.nat(40).map((n) =>
    n === 0
      ? step("close", (real) => {
          real.holds.close();
          real.closedWithReleases ??= real.releases.length;
        })
      : step("advance(1)", (real) => real.clock.advance(1)),
  ),
);

const scheduler = stats.scheduler(() => current?.check());

describe("session holds under fast-check's scheduler (model-based)", () => {
  it("never releases a held or busy child, releases each child at most once, always within the grace, one child per session, nothing after close", async () => {
    await fc.assert(
      fc.asyncProperty(
        scheduler,
        fc.array(fc.boolean(), { maxLength: MAX_COMMANDS }),
        fc.commands(commandArbs, { maxCommands: MAX_COMMANDS, size: "max" }),
        async (s, outcomes, commands) => {
          stats.runs++;
          const real = new Real(s, outcomes);
          current = real;
          try {
            await fc.asyncModelRun(() => ({ model: {}, real }), commands);
            // Let everything pending resolve, end every turn, drop every holder: within one grace nothing may stay alive.
            await s.waitIdle();
            for (const prompts of real.turns.values()) for (const prompt of prompts.splice(0)) prompt.settle("completed");
            for (const c of CONNECTIONS) await real.cleanups.cleanupForConnection(c);
            await drainMicrotasks();
            real.check();
            await real.clock.advance(GRACE);
            await s.waitIdle();
            await real.clock.advance(0);
            real.check();
            if (real.closedWithReleases === undefined) {
              for (const sessionId of SESSIONS) {
                if (real.holds.state(sessionId) !== "childless")
                  throw new Error(`${sessionId} still ${real.holds.state(sessionId)} one grace after its last holder left`);
              }
              // Nothing leaks: every child an acquisition produced was released, exactly once.
              for (const child of real.acquired) {
                if (!real.lost.has(child) && !real.releases.some((r) => r.child === child)) throw new Error(`child ${child.serial} leaked`);
              }
            }
          } finally {
            current = undefined;
          }
        },
      ),
      { numRuns: modelRuns(6_000) },
    );
  });
});
