import fc from "fast-check";
import { describe, it } from "vitest";
import { Executions, type TurnHandle } from "../../src/lifecycle/executions.js";
import type { LifecycleRecord } from "../../src/lifecycle/lifecycle-records.js";
import { locationKey, type LocationKey } from "../../src/lifecycle/location-key.js";
import { LocationRetention } from "../../src/lifecycle/location-retention.js";
import { LocationServicesCache } from "../../src/lifecycle/location-services-cache.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { modelStep } from "../support/model-step.js";

// The rules are scale-free; small windows keep a thousand runs fast.
const MINUTE = 60_000;
const SWEEP = MINUTE;
const TTL = 10 * MINUTE;
const MAX_HOLD = 60 * MINUTE;

const LOCATIONS: readonly LocationKey[] = [locationKey("/w/app"), locationKey("/w/app", "other"), locationKey("/w/lib")];
const SESSIONS = ["s1", "s2", "s3"] as const;

/** Last durable event per location, as the model sees it (opened, turn began, turn settled, touched). */
class Real {
  readonly clock = new VirtualClock(0);
  readonly records: LifecycleRecord[] = [];
  readonly executions = new Executions(this.clock, (r) => this.onRecord(r));
  readonly turns = new Map<string, { handle: TurnHandle; location: LocationKey }>();
  readonly lastDurable = new Map<string, number>();
  /** The last real need (an open) of a retained location: it extends the idle deadline, not the cap. */
  readonly lastNeed = new Map<string, number>();
  readonly violations: string[] = [];
  readonly retention: LocationRetention<{ id: string }>;

  constructor(readonly scheduler: fc.Scheduler) {
    const cache = new LocationServicesCache<{ id: string }>({
      boot: async (key) => ({ id: key.id }),
      close: (key) => {
        if (this.executions.hasActiveAt(key.id)) this.violations.push(`${key.id} closed with an active session`);
        return this.scheduler.schedule(Promise.resolve(), `close ${key.id}`);
      },
    });
    this.retention = new LocationRetention({
      clock: this.clock,
      executions: this.executions,
      cache,
      idleTtlMs: TTL,
      maxActiveHoldMs: MAX_HOLD,
      sweepIntervalMs: SWEEP,
      cancelPendingQuestions: () => undefined,
      record: (r) => this.onRecord(r),
    });
    this.retention.start();
    this.executions.onBegan((e) => this.lastDurable.set(e.location.id, this.clock.now()));
    this.executions.onSettled((s) => this.lastDurable.set(s.location.id, this.clock.now()));
  }

  private onRecord(record: LifecycleRecord): void {
    this.records.push(record);
    const id = "directory" in record ? locationKey(record.directory, record.workspace).id : "";
    const last = this.lastDurable.get(id) ?? 0;
    if (record.kind === "location_booted") this.lastDurable.set(id, this.clock.now());
    if (record.kind === "session_interrupted" && this.clock.now() < last + MAX_HOLD) {
      this.violations.push(`${id} interrupted for inactivity ${this.clock.now() - last} ms after its last durable event`);
    }
    if (record.kind !== "location_evicted") return;
    if (this.executions.hasActiveAt(id)) this.violations.push(`${id} evicted before its sessions settled`);
    if (record.reason === "idle" && this.clock.now() < last + TTL) this.violations.push(`${id} evicted while within its idle TTL`);
  }

  check(): void {
    if (this.violations.length > 0) throw new Error(this.violations.join("; "));
    const now = this.clock.now();
    for (const key of LOCATIONS) {
      const status = this.retention.status(key);
      if (!status || status.state !== "retained") continue;
      const last = this.lastDurable.get(key.id) ?? 0;
      const lastUse = Math.max(last, this.lastNeed.get(key.id) ?? 0);
      const active = this.executions.hasActiveAt(key.id);
      if (!active && now >= lastUse + TTL + SWEEP) throw new Error(`idle ${key.id} not evicted within TTL plus one sweep`);
      if (active && now >= last + MAX_HOLD + SWEEP) throw new Error(`busy ${key.id} held past its cap plus one sweep`);
    }
  }
}

const step = (name: string, run: (real: Real) => unknown) => modelStep<Real>(name, run);

const locationArb = fc.constantFrom(...LOCATIONS);
const sessionArb = fc.constantFrom(...SESSIONS);

const commandArbs = [
  locationArb.map((key) =>
    step(`open(${key.id})`, async (real) => {
      if (real.retention.status(key)?.state === "retained") real.lastNeed.set(key.id, real.clock.now());
      // Opening may wait for a previous stay's close, which the scheduler decides.
      await Promise.race([real.retention.open(key), real.scheduler.waitIdle()]);
    }),
  ),
  fc.tuple(sessionArb, locationArb).map(([s, key]) =>
    step(`turnStart(${s} @ ${key.id})`, (real) => {
      // A turn needs its location's services: only admit it where they are booted.
      if (real.executions.isActive(s) || real.retention.status(key)?.state !== "retained") return;
      const handle = real.executions.begin(s, key, () => {
        void real.scheduler.schedule(Promise.resolve(), `settle interrupted ${s}`).then(() => handle.settle("completed"));
      });
      real.turns.set(s, { handle, location: key });
    }),
  ),
  sessionArb.map((s) => step(`turnEnd(${s})`, (real) => real.turns.get(s)?.handle.settle("completed"))),
  locationArb.map((key) =>
    step(`durableEvent(${key.id})`, (real) => {
      if (real.retention.touch(key)) real.lastDurable.set(key.id, real.clock.now());
    }),
  ),
  fc.constantFrom(MINUTE, 9 * MINUTE, 30 * MINUTE, 2 * MAX_HOLD).map((ms) => step(`advance(${ms / MINUTE}m)`, (real) => real.clock.advance(ms))),
  fc.constant(
    step("resolveOne", async (real) => {
      if (real.scheduler.count() > 0) await real.scheduler.waitOne();
    }),
  ),
];

describe("location retention under fast-check's scheduler (model-based)", () => {
  it("never evicts an active location before its cap, evicts idle ones within TTL plus a sweep, and only after settlement", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.commands(commandArbs, { maxCommands: 30 }), async (scheduler, commands) => {
        const real = new Real(scheduler);
        await fc.asyncModelRun(() => ({ model: {}, real }), commands);
        await scheduler.waitIdle();
        real.check();
        real.retention.stop();
      }),
      { numRuns: 1_000 },
    );
  });
});
