import { deferred, type Deferred } from "../../src/lifecycle/deferred.js";
import { Executions, type InterruptReason, type Settlement } from "../../src/lifecycle/executions.js";
import type { LifecycleRecord } from "../../src/lifecycle/lifecycle-records.js";
import type { LocationKey } from "../../src/lifecycle/location-key.js";
import { LocationRetention } from "../../src/lifecycle/location-retention.js";
import { LocationServicesCache } from "../../src/lifecycle/location-services-cache.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { steppedWallClock } from "./stepped-wall-clock.js";
import { PendingQuestions, type QuestionOutcome } from "../../src/location/pending-questions.js";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** Stand-in for a location's services: the real pending-questions registry plus close bookkeeping. */
export interface FixtureServices {
  readonly serial: number;
  readonly questions: PendingQuestions<string, string>;
  closeCalls: number;
  closed: boolean;
}

export interface RunningTurn {
  readonly sessionId: string;
  /** The services the turn's tool holds, captured when it started. */
  readonly services: FixtureServices;
  readonly settled: Promise<Settlement>;
  /** Lets a tool call that is sleeping return. */
  finish(): void;
}

/**
 * The real kernel (executions, cache, retention) on a virtual clock, with fixture
 * "tools" that sleep silently or wait on a question, as the reference tests do.
 */
export function retentionHarness(options: { slowClose?: boolean; isHeld?: (key: LocationKey) => boolean; sweepSliceSize?: number } = {}) {
  const clock = new VirtualClock();
  // The kernel's clock: virtual time, its wall clock stepped by `stepWall`.
  const { kernelClock, wallNow, stepWall } = steppedWallClock(clock);
  const records: LifecycleRecord[] = [];
  const record = (r: LifecycleRecord) => records.push(r);
  const executions = new Executions(clock, record);
  let serial = 0;
  const closeGate: Deferred<void> = deferred<void>();
  if (!options.slowClose) closeGate.resolve();
  const closeReasons: string[] = [];
  const cache = new LocationServicesCache<FixtureServices>({
    boot: async () => ({ serial: ++serial, questions: new PendingQuestions(), closeCalls: 0, closed: false }),
    close: async (_key, services, reason) => {
      closeReasons.push(reason);
      services.closeCalls++;
      await closeGate.promise;
      services.closed = true;
    },
  });
  const retention = new LocationRetention<FixtureServices>({
    clock: kernelClock,
    executions,
    cache,
    idleTtlMs: 60 * MINUTE,
    maxActiveHoldMs: 24 * HOUR,
    sweepIntervalMs: MINUTE,
    cancelPendingQuestions: (_key, services, reason) => {
      services.questions.cancelAll(reason);
    },
    record,
    ...(options.isHeld ? { isHeld: options.isHeld } : {}),
    ...(options.sweepSliceSize ? { sweepSliceSize: options.sweepSliceSize } : {}),
  });
  retention.start();

  /** Starts a turn whose tool runs `work` with the location's services, honouring interruption. */
  async function startTurn(
    sessionId: string,
    key: LocationKey,
    work: (services: FixtureServices) => Promise<void>,
    { settleDelayMs = 0 }: { settleDelayMs?: number } = {},
  ): Promise<RunningTurn> {
    const services = await retention.open(key);
    const interrupted = deferred<InterruptReason>();
    const finished = deferred<void>();
    const handle = executions.begin(sessionId, key, (reason) => interrupted.resolve(reason));
    const settled = executions.settled(sessionId)!;
    // An interrupted tool may take a while to wind down ("slow cleanup").
    const woundDown = interrupted.promise.then(
      () => new Promise<void>((resolve) => (settleDelayMs > 0 ? clock.setTimeout(resolve, settleDelayMs) : resolve())),
    );
    void Promise.race([work(services), woundDown, finished.promise]).then(() => handle.settle("completed"));
    return { sessionId, services, settled, finish: () => finished.resolve() };
  }

  /** A tool call that stays silent until `finish()`. */
  const silentToolCall = (sessionId: string, key: LocationKey, options?: { settleDelayMs?: number }) =>
    startTurn(sessionId, key, () => new Promise<void>(() => undefined), options);

  /** A tool call waiting on a question; resolves the turn once the question is answered or cancelled. */
  async function questionTurn(sessionId: string, key: LocationKey, questionId: string, options?: { settleDelayMs?: number }) {
    let outcome: Promise<QuestionOutcome<string>> | undefined;
    const turn = await startTurn(
      sessionId,
      key,
      async (services) => {
        outcome = services.questions.ask(questionId, sessionId, "may I?", clock.now());
        // A question cancelled by an interruption ends the tool only through the interruption itself.
        const result = await outcome;
        if (result.outcome === "cancelled") await new Promise<void>(() => undefined);
      },
      options,
    );
    return { ...turn, outcome: () => outcome! };
  }

  const evictions = () => records.filter((r) => r.kind === "location_evicted");
  const interruptions = () => records.filter((r) => r.kind === "session_interrupted");

  return {
    closeReasons,
    clock,
    wallNow,
    stepWall,
    records,
    executions,
    cache,
    retention,
    closeGate,
    startTurn,
    silentToolCall,
    questionTurn,
    evictions,
    interruptions,
  };
}
