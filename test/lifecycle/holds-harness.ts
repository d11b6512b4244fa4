import { deferred, type Deferred } from "../../src/lifecycle/deferred.js";
import { Executions, type TurnHandle } from "../../src/lifecycle/executions.js";
import { locationKey } from "../../src/lifecycle/location-key.js";
import { SessionHolds } from "../../src/lifecycle/session-holds.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { steppedWallClock } from "./stepped-wall-clock.js";

export const GRACE = 5_000;

export interface FakeChild {
  readonly serial: number;
}

interface PendingAcquisition {
  readonly sessionId: string;
  readonly gate: Deferred<FakeChild>;
}

/**
 * The real SessionHolds on a virtual clock, with an acquirer whose every call stays
 * pending until the test resolves or fails it (the audit's "deferred provider acquisition").
 */
export function holdsHarness(options: { releaseFails?: boolean; onError?: (error: unknown, sessionId: string) => void; stopsWait?: boolean } = {}) {
  const clock = new VirtualClock();
  // The kernel's clock: virtual time, its wall clock stepped by `stepWall`.
  const { kernelClock, wallNow, stepWall } = steppedWallClock(clock);
  const executions = new Executions(clock);
  const acquisitions: PendingAcquisition[] = [];
  const releases: Array<{ sessionId: string; child: FakeChild; at: number }> = [];
  /** With `stopsWait`: each stop's gate, resolved by the test when the stop is to finish. */
  const stopGates: Deferred<void>[] = [];
  let serial = 0;
  const holds = new SessionHolds<FakeChild>({
    clock: kernelClock,
    releaseGraceMs: GRACE,
    turns: executions,
    acquire: (sessionId) => {
      const gate = deferred<FakeChild>();
      acquisitions.push({ sessionId, gate });
      return gate.promise;
    },
    stop: async (sessionId, child) => {
      releases.push({ sessionId, child, at: clock.now() });
      if (options.stopsWait) {
        const gate = deferred<void>();
        stopGates.push(gate);
        await gate.promise;
      }
      if (options.releaseFails) throw new Error("cannot stop");
    },
    ...(options.onError ? { onError: options.onError } : {}),
  });
  const newChild = (): FakeChild => ({ serial: ++serial });
  const turns = new Map<string, TurnHandle>();
  return {
    clock,
    executions,
    holds,
    acquisitions,
    releases,
    stopGates,
    newChild,
    wallNow,
    stepWall,
    /** Resolves the n-th acquisition call (0-based) with a child and lets the kernel react. */
    async succeed(n: number, child: FakeChild = newChild()): Promise<FakeChild> {
      acquisitions[n]!.gate.resolve(child);
      await clock.advance(0);
      return child;
    },
    async fail(n: number, message = "agent failed to start"): Promise<void> {
      acquisitions[n]!.gate.reject(new Error(message));
      await clock.advance(0);
    },
    beginTurn(sessionId: string): void {
      turns.set(
        sessionId,
        executions.begin(sessionId, locationKey("/w/app"), () => undefined),
      );
    },
    async endTurn(sessionId: string): Promise<void> {
      turns.get(sessionId)!.settle("completed");
      await clock.advance(0);
    },
  };
}
