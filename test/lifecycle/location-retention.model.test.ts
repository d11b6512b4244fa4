import fc from "fast-check";
import { describe, it } from "vitest";
import { Executions, type TurnHandle } from "../../src/lifecycle/executions.js";
import type { LifecycleRecord } from "../../src/lifecycle/lifecycle-records.js";
import { locationKey, type LocationKey } from "../../src/lifecycle/location-key.js";
import { LocationRetention, type LocationNeed } from "../../src/lifecycle/location-retention.js";
import { LocationServicesCache, LocationServicesClosedError } from "../../src/lifecycle/location-services-cache.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { drainMicrotasks, ModelStats, modelRuns } from "../support/model-budget.js";

// The rules are scale-free; small windows keep thousands of runs fast.
const MINUTE = 60_000;
const SWEEP = MINUTE;
const TTL = 10 * MINUTE;
const MAX_HOLD = 60 * MINUTE;
const MAX_COMMANDS = 120;

const LOCATIONS: readonly LocationKey[] = [locationKey("/w/app"), locationKey("/w/app", "other"), locationKey("/w/lib")];
const SESSIONS = ["s1", "s2", "s3"] as const;

interface Services {
  readonly id: string;
  readonly serial: number;
  closes: number;
}

const stats = new ModelStats("location retention");
let current: Real | undefined;

/**
 * The real kernel (executions, services cache, retention) with every close resolved when
 * fast-check's scheduler says so, and prompts that acquire an agent the way the host does:
 * a need begins, the location is opened (which may wait for a previous stay to close), the
 * agent starts (a scheduled step), then the turn begins on the services it was given.
 */
class Real {
  /** One event-loop turn settles the kernel after each timer: it has no I/O. */
  readonly clock = new VirtualClock(0, 1);
  readonly records: LifecycleRecord[] = [];
  readonly executions = new Executions(this.clock, (r) => this.onRecord(r));
  /** Each session's prompts in flight, oldest first: a prompt during a turn joins it (agents queue it). */
  readonly turns = new Map<string, TurnHandle[]>();
  /** Last durable event per location, as the model sees it (booted, turn began or settled, touched, kept). */
  readonly lastDurable = new Map<string, number>();
  /** The last real need of a location: an open, the end of an acquisition, the end of a hold (by when it must idle out). */
  readonly lastNeed = new Map<string, number>();
  /**
   * What the kernel promises an idle TTL from (before which it must not idle out): an open, or the
   * last sweep that saw an acquisition in flight. A hold promises nothing once it is gone.
   */
  readonly lastSafe = new Map<string, number>();
  readonly needs = new Map<string, number>();
  readonly held = new Set<string>();
  /** Locations whose sessions were interrupted by a cap cleanup since they booted or were kept. */
  readonly capCleanup = new Set<string>();
  /** The services of each location that are booted and not yet closed. */
  readonly live = new Map<string, Services>();
  readonly all: Services[] = [];
  readonly violations: string[] = [];
  readonly cache: LocationServicesCache<Services>;
  readonly retention: LocationRetention<Services>;
  closedAll = false;
  private serial = 0;

  constructor(readonly scheduler: fc.Scheduler) {
    this.cache = new LocationServicesCache<Services>({
      boot: async (key) => {
        if (this.closedAll) this.violations.push(`${key.id} booted after closeAll`);
        if (this.live.has(key.id)) this.violations.push(`${key.id} booted while its previous services still run`);
        const services = { id: key.id, serial: ++this.serial, closes: 0 };
        this.live.set(key.id, services);
        this.all.push(services);
        return services;
      },
      close: async (key, services, reason) => {
        services.closes++;
        if (services.closes > 1) this.violations.push(`${key.id} services ${services.serial} closed twice`);
        this.onClose(key, reason);
        await this.scheduler.schedule(Promise.resolve(), `close ${key.id} #${services.serial}`);
        if (this.live.get(key.id) === services) this.live.delete(key.id);
      },
    });
    this.retention = new LocationRetention({
      clock: this.clock,
      executions: this.executions,
      cache: this.cache,
      idleTtlMs: TTL,
      maxActiveHoldMs: MAX_HOLD,
      sweepIntervalMs: SWEEP,
      sweepSliceSize: 2,
      cancelPendingQuestions: () => undefined,
      record: (r) => this.onRecord(r),
      isHeld: (key) => this.held.has(key.id),
    });
    this.retention.start();
    this.executions.onBegan((e) => this.durable(e.location));
    this.executions.onSettled((s) => this.durable(s.location));
  }

  /** Mirrors `touch`: only a location that is cached and not going away takes a durable event. */
  durable(key: LocationKey): void {
    const status = this.retention.status(key);
    if (status && status.state !== "evicting") this.lastDurable.set(key.id, this.clock.now());
  }

  private onRecord(record: LifecycleRecord): void {
    this.records.push(record);
    const id = "directory" in record ? locationKey(record.directory, record.workspace).id : "";
    const last = this.lastDurable.get(id) ?? 0;
    const now = this.clock.now();
    if (record.kind === "location_booted" || record.kind === "location_kept") this.lastDurable.set(id, now);
    if (record.kind === "location_booted" || record.kind === "location_kept") this.capCleanup.delete(id);
    if (record.kind === "session_interrupted") this.capCleanup.add(id);
    if (record.kind === "session_interrupted" && now < last + MAX_HOLD) {
      this.violations.push(`${id} interrupted for inactivity ${now - last} ms after its last durable event`);
    }
  }

  /** Checked when services are closed, which is when the kernel decided to evict (a record comes after the close). */
  private onClose(key: LocationKey, reason: string): void {
    const id = key.id;
    if (reason === "shutdown") return;
    const now = this.clock.now();
    const last = this.lastDurable.get(id) ?? 0;
    const lastUse = Math.max(last, this.lastSafe.get(id) ?? 0);
    if (this.executions.hasActiveAt(id)) this.violations.push(`${id} evicted before its sessions settled`);
    if ((this.needs.get(id) ?? 0) > 0) this.violations.push(`${id} evicted under an agent still starting`);
    // A real need extends the deadline only up to the cap (L3).
    if (reason === "idle" && now < Math.min(lastUse + TTL, last + MAX_HOLD))
      this.violations.push(`${id} evicted while within its idle TTL (now ${now}, last durable ${last}, last need ${this.lastNeed.get(id)})`);
    if (reason === "idle" && this.held.has(id)) this.violations.push(`${id} evicted as idle while held`);
    // Its turns' settlements are durable events: a cap cleanup was judged when it interrupted them (checked there).
    if (reason === "inactivity" && now < last + MAX_HOLD && !this.capCleanup.has(id))
      this.violations.push(`${id} evicted for inactivity before its cap`);
  }

  /** Invariants whenever the kernel is quiescent: between commands and after every scheduled step. */
  check(): void {
    if (this.violations.length > 0) throw new Error(this.violations.join("; "));
    if (this.closedAll) return;
    const now = this.clock.now();
    for (const key of LOCATIONS) {
      const status = this.retention.status(key);
      if (!status) continue;
      // Rule 3: nothing (keep-alive, a real need, a hold) pushes the deadline past the cap.
      if (status.expiresAt > status.capAt) throw new Error(`${key.id} deadline ${status.expiresAt} past its cap ${status.capAt}`);
      if (status.activeAt > now) throw new Error(`${key.id} active in the future`);
      if (status.state !== "retained") continue;
      const last = this.lastDurable.get(key.id) ?? 0;
      if (status.activeAt < last) throw new Error(`${key.id} missed a durable event: activeAt ${status.activeAt} < ${last}`);
      const lastUse = Math.max(last, this.lastNeed.get(key.id) ?? 0);
      const busy = this.executions.hasActiveAt(key.id) || (this.needs.get(key.id) ?? 0) > 0 || this.held.has(key.id);
      if (!busy && now >= lastUse + TTL + SWEEP) throw new Error(`idle ${key.id} not evicted within TTL plus one sweep`);
      if (busy && now >= last + MAX_HOLD + SWEEP) throw new Error(`busy ${key.id} held past its cap plus one sweep`);
    }
  }

  /** A prompt as the host runs it: need → open → agent starts (scheduled) → the turn begins on those services. */
  async prompt(sessionId: string, key: LocationKey, agentStarts: boolean): Promise<void> {
    if (this.closedAll) return;
    const need: LocationNeed = this.retention.beginNeed(key);
    this.needs.set(key.id, (this.needs.get(key.id) ?? 0) + 1);
    this.lastNeed.set(key.id, this.clock.now());
    this.lastSafe.set(key.id, this.clock.now());
    let admitted = false;
    try {
      const services = await this.retention.open(key);
      await this.scheduler.schedule(Promise.resolve(), `agent for ${sessionId} @ ${key.id} ${agentStarts ? "starts" : "fails"}`);
      if (!agentStarts) return;
      // The host refuses a child whose services are no longer the location's: that must never happen.
      if (this.retention.peek(key) !== services && !this.closedAll) this.violations.push(`${key.id} evicted while the agent of ${sessionId} started`);
      // The host refuses a prompt while the turn is being interrupted; one during a running turn joins it.
      if (this.executions.get(sessionId)?.state.name === "interrupting") return;
      const joined = this.executions.get(sessionId)?.location;
      const handle = this.executions.begin(sessionId, joined ?? key, () => {
        // The agent answers every prompt of the interrupted turn, one after another.
        void this.scheduler.schedule(Promise.resolve(), `settle interrupted ${sessionId}`).then(() => {
          for (const prompt of this.turns.get(sessionId)?.splice(0) ?? []) prompt.settle("completed");
        });
      });
      this.turns.set(sessionId, [...(this.turns.get(sessionId) ?? []), handle]);
      admitted = true;
    } catch (error) {
      if (!(error instanceof LocationServicesClosedError)) this.violations.push(`open ${key.id} failed: ${String(error)}`);
    } finally {
      this.needs.set(key.id, this.needs.get(key.id)! - 1);
      // The need kept the location in use until now, and the kernel saw it at every sweep until then.
      this.lastNeed.set(key.id, this.clock.now());
      this.lastSafe.set(key.id, Math.max(this.lastSafe.get(key.id) ?? 0, Math.floor(this.clock.now() / SWEEP) * SWEEP));
      need.end(admitted);
    }
  }
}

type Command = fc.AsyncCommand<Record<string, never>, Real>;

const step = (name: string, run: (real: Real) => unknown): Command => stats.step(name, run);

const locationArb = fc.constantFrom(...LOCATIONS);
const sessionArb = fc.constantFrom(...SESSIONS);

const commandArbs = [
  // Turns are admitted in every state of the location: not loaded, retained, interrupting, evicting.
  fc.tuple(sessionArb, locationArb, fc.boolean()).map(([s, key, ok]) =>
    step(`prompt(${s} @ ${key.id}${ok ? "" : ", agent fails"})`, (real) => {
      // Not awaited: the agent starts while other commands and scheduled steps run.
      void real.prompt(s, key, ok);
    }),
  ),
  // The agent answers the session's oldest prompt in flight.
  sessionArb.map((s) => step(`turnEnd(${s})`, (real) => real.turns.get(s)?.shift()?.settle("completed"))),
  locationArb.map((key) =>
    step(`durableEvent(${key.id})`, (real) => {
      if (real.retention.touch(key)) real.lastDurable.set(key.id, real.clock.now());
    }),
  ),
  locationArb.map((key) =>
    step(`open(${key.id})`, (real) => {
      if (real.closedAll) return;
      if (real.retention.status(key)?.state === "retained") {
        real.lastNeed.set(key.id, real.clock.now());
        real.lastSafe.set(key.id, real.clock.now());
      }
      void real.retention.open(key).catch(() => undefined);
    }),
  ),
  locationArb.map((key) =>
    step(`toggleHeld(${key.id})`, (real) => {
      if (!real.held.delete(key.id)) real.held.add(key.id);
      // The hold kept the location in use until now.
      else real.lastNeed.set(key.id, real.clock.now());
    }),
  ),
  fc.constantFrom(MINUTE, 9 * MINUTE, 30 * MINUTE, 2 * MAX_HOLD).map((ms) => step(`advance(${ms / MINUTE}m)`, (real) => real.clock.advance(ms))),
  fc.constant(
    step("resolveOne", async (real) => {
      if (real.scheduler.count() > 0) await real.scheduler.waitOne();
    }),
  ),
  // Host shutdown, rarely: the sweeps stop and every location closes; nothing boots after.
  fc.nat(40).map((n) =>
    n === 0
      ? step("shutdown", (real) => {
          real.closedAll = true;
          real.retention.stop();
          void real.cache.closeAll();
        })
      : step("advance(1ms)", (real) => real.clock.advance(1)),
  ),
];

const scheduler = stats.scheduler(() => current?.check());

describe("location retention under fast-check's scheduler (model-based)", () => {
  it("never evicts under active work, a need or a hold before the cap; never past the cap; idle locations within TTL plus a sweep", async () => {
    await fc.assert(
      fc.asyncProperty(scheduler, fc.commands(commandArbs, { maxCommands: MAX_COMMANDS, size: "max" }), async (s, commands) => {
        stats.runs++;
        const real = new Real(s);
        current = real;
        try {
          await fc.asyncModelRun(() => ({ model: {}, real }), commands);
          // Drain: every agent starts or fails, every turn ends, holds go; then everything idles out.
          await s.waitIdle();
          for (const prompts of real.turns.values()) for (const prompt of prompts.splice(0)) prompt.settle("completed");
          for (const id of real.held) real.lastNeed.set(id, real.clock.now());
          real.held.clear();
          await drainMicrotasks();
          await s.waitIdle();
          real.check();
          for (let i = 0; i < 3; i++) {
            await real.clock.advance(TTL + 2 * SWEEP);
            await s.waitIdle();
          }
          real.check();
          if (!real.closedAll && real.retention.list().length > 0)
            throw new Error(`still cached after every TTL: ${real.retention.list().map((l) => l.key.id)}`);
          await real.cache.closeAll();
          await s.waitIdle();
          // Every set of services that booted was closed, exactly once.
          for (const services of real.all)
            if (services.closes !== 1) throw new Error(`services ${services.serial} of ${services.id} closed ${services.closes} times`);
          real.retention.stop();
        } finally {
          current = undefined;
        }
      }),
      { numRuns: modelRuns(5_000) },
    );
  });
});
