import fc from "fast-check";
import { describe, it } from "vitest";
import { ConnectionCleanups } from "../../src/lifecycle/connection-cleanups.js";
import { Executions, type TurnHandle } from "../../src/lifecycle/executions.js";
import { locationKey } from "../../src/lifecycle/location-key.js";
import { SessionHolds } from "../../src/lifecycle/session-holds.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { modelStep } from "../support/model-step.js";

const GRACE = 15_000;
const SESSIONS = ["s1", "s2"] as const;
const CONNECTIONS = ["c1", "c2", "c3"] as const;
type SessionId = (typeof SESSIONS)[number];
type ConnectionId = (typeof CONNECTIONS)[number];

interface Child {
  readonly serial: number;
  readonly sessionId: string;
}

/** The real kernel, with every acquisition and release resolved when fast-check's scheduler says so. */
class Real {
  readonly clock = new VirtualClock(0);
  readonly executions = new Executions(this.clock);
  readonly cleanups = new ConnectionCleanups();
  readonly turns = new Map<string, TurnHandle>();
  readonly releases: Array<{ child: Child; at: number }> = [];
  readonly violations: string[] = [];
  readonly holds: SessionHolds<Child>;
  disposedWithReleases: number | undefined;
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
        const succeeds = this.outcomes.shift() ?? true;
        const child = { serial: ++this.serial, sessionId };
        return this.scheduler
          .schedule(Promise.resolve(), `acquire ${sessionId} -> ${succeeds ? `child ${child.serial}` : "failure"}`)
          .then(() => {
            if (!succeeds) throw new Error("agent failed to start");
            return child;
          });
      },
      release: (sessionId, child) => {
        this.onRelease(sessionId, child);
        return this.scheduler.schedule(Promise.resolve(), `release child ${child.serial}`);
      },
    });
  }

  private onRelease(sessionId: string, child: Child): void {
    if (this.releases.some((r) => r.child === child)) this.violations.push(`child ${child.serial} released twice`);
    if (this.disposedWithReleases !== undefined) this.violations.push(`child ${child.serial} released after dispose`);
    // A surplus child (a second acquisition's) is released while the session keeps its own; only the session's child obeys holds.
    const isSessionChild = this.holds.state(sessionId) === "releasing";
    if (isSessionChild && this.holds.holderCount(sessionId) > 0) this.violations.push(`child ${child.serial} released while held`);
    if (isSessionChild && this.executions.isActive(sessionId)) this.violations.push(`child ${child.serial} released during a turn`);
    this.releases.push({ child, at: this.clock.now() });
  }

  /** The invariants that must hold between any two steps. */
  check(): void {
    if (this.violations.length > 0) throw new Error(this.violations.join("; "));
    if (this.disposedWithReleases !== undefined) {
      if (this.clock.pendingTimers() > 0) throw new Error("a timer is pending after dispose");
      return;
    }
    for (const s of SESSIONS) {
      if (this.holds.state(s) !== "live" || this.holds.holderCount(s) > 0) continue;
      // A live child with no holder always has its release clock running (or waits for its turn).
      const releaseAt = this.holds.releaseAt(s);
      if (this.holds.awaitingTurnEnd(s)) {
        if (!this.executions.isActive(s)) throw new Error(`${s} waits for a turn that is not running`);
      } else if (releaseAt === undefined) {
        throw new Error(`${s} has a live child, no holder and no release clock`);
      } else if (releaseAt > this.clock.now() + GRACE) {
        throw new Error(`${s} release clock beyond the grace`);
      }
    }
  }
}

const step = (name: string, run: (real: Real) => unknown) => modelStep<Real>(name, run);

const sessionArb = fc.constantFrom<SessionId>(...SESSIONS);
const connectionArb = fc.constantFrom<ConnectionId>(...CONNECTIONS);

const commandArbs = [
  fc.tuple(sessionArb, connectionArb).map(([s, c]) =>
    step(`hold(${s}, ${c})`, (real) => {
      if (real.disposedWithReleases !== undefined) return;
      const ticket = real.holds.hold(s, c);
      // As the server does: the cleanup is registered before the hold is awaited.
      real.cleanups.register(`${c}/${s}`, () => void ticket.release(), c);
    }),
  ),
  fc.tuple(sessionArb, connectionArb).map(([s, c]) => step(`release(${s}, ${c})`, (real) => real.holds.release(s, c))),
  connectionArb.map((c) => step(`connectionClosed(${c})`, (real) => real.cleanups.cleanupForConnection(c))),
  sessionArb.map((s) =>
    step(`turnStart(${s})`, (real) => {
      if (!real.executions.isActive(s)) real.turns.set(s, real.executions.begin(s, locationKey("/w/app"), () => undefined));
    }),
  ),
  sessionArb.map((s) => step(`turnEnd(${s})`, (real) => real.turns.get(s)?.settle("completed"))),
  sessionArb.map((s) => step(`forget(${s})`, (real) => real.holds.forget(s))),
  sessionArb.map((s) =>
    step(`childCrashed(${s})`, (real) => {
      const child = real.holds.child(s);
      if (child) real.holds.childLost(s, child);
    }),
  ),
  fc.constantFrom(1_000, GRACE - 1, GRACE, 3 * GRACE).map((ms) => step(`advance(${ms})`, (real) => real.clock.advance(ms))),
  fc.constant(
    step("resolveOne", async (real) => {
      if (real.scheduler.count() > 0) await real.scheduler.waitOne();
    }),
  ),
  fc.constant(
    step("dispose", (real) => {
      real.holds.dispose();
      real.disposedWithReleases ??= real.releases.length;
    }),
  ),
];

describe("session holds under fast-check's scheduler (model-based)", () => {
  it("never releases a held or busy child, releases each child at most once, always within the grace, nothing after dispose", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.boolean(), { maxLength: 40 }),
        fc.commands(commandArbs, { maxCommands: 40 }),
        async (scheduler, outcomes, commands) => {
          const real = new Real(scheduler, outcomes);
          await fc.asyncModelRun(() => ({ model: {}, real }), commands);
          // Let everything pending resolve, end every turn, drop every holder: within one grace nothing may stay alive.
          await scheduler.waitIdle();
          for (const turn of real.turns.values()) turn.settle("completed");
          for (const c of CONNECTIONS) await real.cleanups.cleanupForConnection(c);
          await real.clock.advance(0);
          await scheduler.waitIdle();
          real.check();
          await real.clock.advance(GRACE);
          await scheduler.waitIdle();
          real.check();
          if (real.disposedWithReleases === undefined) {
            for (const s of SESSIONS) {
              if (real.holds.state(s) === "live") throw new Error(`${s} still has a child one grace after its last holder left`);
            }
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
