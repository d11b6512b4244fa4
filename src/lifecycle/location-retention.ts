import type { Clock, Timer } from "./clock.js";
import { deferred, type Deferred } from "./deferred.js";
import type { ActiveExecution, Executions, InterruptReason, Settlement } from "./executions.js";
import type { RecordSink } from "./lifecycle-records.js";
import { capOf, freshActivity, isExpired, keepAlive, touchActivity, type LocationActivity, type RetentionWindows } from "./location-activity.js";
import type { LocationKey } from "./location-key.js";
import type { LocationEntry, LocationServicesCache } from "./location-services-cache.js";
import { MinHeap } from "./min-heap.js";
import { WallTime } from "./wall-time.js";

/**
 * A cached location's retention state:
 * - `retained`: kept by its idle TTL, refreshed by durable events and (up to the cap) by active execution;
 * - `interrupting`: it reached the max active hold; its sessions are being interrupted and settled;
 * - `evicting`: its services are being stopped.
 */
type RetentionState = "retained" | "interrupting" | "evicting";

export interface RetentionOptions<S> extends RetentionWindows {
  readonly clock: Clock;
  readonly executions: Executions;
  readonly cache: LocationServicesCache<S>;
  readonly sweepIntervalMs: number;
  /** Cancels the location's pending questions when the cap interrupts its sessions. */
  readonly cancelPendingQuestions: (key: LocationKey, services: S, reason: InterruptReason) => Promise<void> | void;
  readonly record: RecordSink;
  /** Reports a failure of a cleanup step; the sweep carries on. */
  readonly onError?: (error: unknown, key: LocationKey) => void;
  /**
   * Whether a client still holds a session at `key` (an open chat, an editor). A held
   * location is kept like an active one, up to the cap. Leave it out to evict held
   * locations on their idle TTL (the host's `evictHeld`).
   */
  readonly isHeld?: (key: LocationKey) => boolean;
  /**
   * At most this many expired locations are handled in one turn of the event loop; the
   * rest follow in the next ones, so a mass expiry never blocks the host. Default 1,000.
   */
  readonly sweepSliceSize?: number;
}

/** A real need in flight at a location (an agent child being acquired there). */
export interface LocationNeed {
  /**
   * The need is over. `workAdmitted`: what it prepared goes on (the agent started), so a
   * cleanup of the capped location that is under way keeps it. Later calls do nothing.
   */
  end(workAdmitted: boolean): void;
}

const DEFAULT_SWEEP_SLICE = 1_000;

/** A location's state; its times in wall-clock milliseconds. */
export interface LocationStatus {
  readonly key: LocationKey;
  readonly state: RetentionState;
  readonly activeAt: number;
  readonly expiresAt: number;
  /** When active execution stops counting as activity, unless a durable event comes first. */
  readonly capAt: number;
  readonly activeSessions: readonly ActiveExecution[];
}

interface Tracked<S> extends LocationActivity {
  readonly key: LocationKey;
  readonly cacheEntry: LocationEntry<S>;
  state: RetentionState;
  /** A turn began here while the capped location was being cleaned up. */
  admittedDuringCleanup: boolean;
  /** The deadline this entry is queued under, or undefined when not queued. Never later than `expiresAt`. */
  queuedDeadline: number | undefined;
}

/**
 * Applies the location-retention rules on every sweep: idle TTL, keep-alive by active
 * execution up to the max active hold, then interrupt → cancel questions → settle →
 * re-check for admitted work → evict.
 */
export class LocationRetention<S> {
  private readonly tracked = new Map<string, Tracked<S>>();
  /**
   * Retained entries by the deadline they were queued under. Deadlines only move later, so a
   * sweep pops what may have expired and re-queues what was refreshed since: touches stay O(1)
   * and a sweep costs the active locations plus the expired ones, not every cached location.
   */
  private readonly deadlines = new MinHeap<Tracked<S>>((a, b) => a.queuedDeadline! < b.queuedDeadline!);
  private readonly cleanups = new Set<Promise<void>>();
  /** Real needs in flight per location id (agent children being acquired there). */
  private readonly needs = new Map<string, number>();
  private timer: Timer | undefined;
  /** The next slice of a sweep that found more expired locations than one slice handles. */
  private nextSlice: Timer | undefined;
  private drained: Deferred<void> | undefined;
  private readonly unsubscribe: Array<() => void>;
  /** Tells the times kept (on elapsed time, as the deadlines count) in wall time for `status()` and `list()`. */
  private readonly wallTime: WallTime;

  constructor(private readonly options: RetentionOptions<S>) {
    this.wallTime = new WallTime(options.clock);
    this.unsubscribe = [
      options.executions.onBegan((execution) => this.onTurnBegan(execution)),
      options.executions.onSettled((settlement) => this.onTurnSettled(settlement)),
    ];
  }

  /** The services of `key`, booting them if needed. This is "real need", never a read. */
  async open(key: LocationKey): Promise<S> {
    const cacheEntry = this.options.cache.open(key);
    const services = await cacheEntry.ready;
    if (this.options.cache.entry(key) === cacheEntry && this.tracked.get(key.id)?.cacheEntry !== cacheEntry) {
      const { activeAt, expiresAt } = freshActivity(this.options.clock.elapsed(), this.options);
      const tracked: Tracked<S> = {
        key,
        cacheEntry,
        state: "retained",
        admittedDuringCleanup: false,
        activeAt,
        expiresAt,
        queuedDeadline: undefined,
      };
      this.tracked.set(key.id, tracked);
      this.enqueue(tracked);
      this.options.record({ kind: "location_booted", directory: key.directory, workspace: key.workspace });
    } else {
      // A real need extends the idle deadline like active execution does: never past the cap (L3).
      const tracked = this.tracked.get(key.id);
      if (tracked?.cacheEntry === cacheEntry && tracked.state === "retained") keepAlive(tracked, this.options.clock.elapsed(), this.options);
    }
    return services;
  }

  /**
   * A real need begins at `key` before it opens the location (the host wraps each agent
   * acquisition in one). Until it ends, the location is kept like an active one (up to the
   * cap), it is never evicted under it, and the re-check after a cap cleanup sees it.
   */
  beginNeed(key: LocationKey): LocationNeed {
    const id = key.id;
    this.needs.set(id, (this.needs.get(id) ?? 0) + 1);
    let ended = false;
    return {
      end: (workAdmitted) => {
        if (ended) return;
        ended = true;
        const left = this.needs.get(id)! - 1;
        if (left > 0) this.needs.set(id, left);
        else this.needs.delete(id);
        const tracked = this.tracked.get(id);
        if (workAdmitted && tracked?.state === "interrupting") tracked.admittedDuringCleanup = true;
      },
    };
  }

  /** Booted services of `key`, or undefined. Never boots. */
  peek(key: LocationKey): S | undefined {
    return this.options.cache.peek(key);
  }

  /** A durable event happened at `key`. Returns false if the location is not cached or already going away. */
  touch(key: LocationKey): boolean {
    const tracked = this.tracked.get(key.id);
    if (!tracked || tracked.state === "evicting") return false;
    touchActivity(tracked, this.options.clock.elapsed(), this.options);
    return true;
  }

  status(key: LocationKey): LocationStatus | undefined {
    const tracked = this.tracked.get(key.id);
    return tracked && this.describe(tracked);
  }

  list(): LocationStatus[] {
    return [...this.tracked.values()].map((tracked) => this.describe(tracked));
  }

  /** One pass of the rules. Cleanups it starts run on; `whenSettled()` awaits them. */
  sweep(): void {
    const now = this.options.clock.elapsed();
    for (const locationId of this.options.executions.activeLocationIds()) this.keepAliveIfRetained(locationId, now);
    for (const locationId of this.needs.keys()) this.keepAliveIfRetained(locationId, now);
    if (this.nextSlice === undefined) this.sweepSlice();
  }

  private keepAliveIfRetained(locationId: string, now: number): void {
    const tracked = this.tracked.get(locationId);
    if (tracked?.state === "retained") keepAlive(tracked, now, this.options);
  }

  /** Handles up to one slice of expired locations, then yields to the event loop if more are due. */
  private sweepSlice(): void {
    this.nextSlice = undefined;
    const now = this.options.clock.elapsed();
    let budget = this.options.sweepSliceSize ?? DEFAULT_SWEEP_SLICE;
    for (let next = this.deadlines.peek(); next && next.queuedDeadline! <= now; next = this.deadlines.peek()) {
      if (budget-- <= 0) {
        this.drained ??= deferred<void>();
        this.nextSlice = this.options.clock.setTimeout(() => this.sweepSlice(), 0);
        return;
      }
      const tracked = this.deadlines.pop()!;
      tracked.queuedDeadline = undefined;
      // Evicted, replaced, or being cleaned up (re-queued if kept): nothing to decide here.
      if (this.tracked.get(tracked.key.id) !== tracked || tracked.state !== "retained") continue;
      this.decide(tracked, now);
    }
    this.drained?.resolve();
    this.drained = undefined;
  }

  private decide(tracked: Tracked<S>, now: number): void {
    const held = this.options.isHeld?.(tracked.key) === true;
    // A held location is kept like an active one, but only up to the cap.
    if (held && capOf(tracked, this.options) > now) keepAlive(tracked, now, this.options);
    if (!isExpired(tracked, now)) {
      this.enqueue(tracked);
      return;
    }
    const id = tracked.key.id;
    if (this.options.executions.hasActiveAt(id) || this.needs.has(id)) this.follow(this.interruptThenEvict(tracked));
    else this.follow(this.evict(tracked, held ? "inactivity" : "idle"));
  }

  /** Sweeps every `sweepIntervalMs` until `stop()`. */
  start(): void {
    if (this.timer) return;
    const loop = () => {
      this.sweep();
      this.timer = this.options.clock.setTimeout(loop, this.options.sweepIntervalMs);
    };
    this.timer = this.options.clock.setTimeout(loop, this.options.sweepIntervalMs);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.nextSlice?.cancel();
    this.nextSlice = undefined;
    this.drained?.resolve();
    this.drained = undefined;
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
  }

  /** Resolves when every cleanup started so far has finished. */
  async whenSettled(): Promise<void> {
    while (this.drained || this.cleanups.size > 0) {
      await this.drained?.promise;
      await Promise.allSettled([...this.cleanups]);
    }
  }

  private async interruptThenEvict(tracked: Tracked<S>): Promise<void> {
    tracked.state = "interrupting";
    tracked.admittedDuringCleanup = false;
    const { executions } = this.options;
    const settled = executions
      .activeAt(tracked.key.id)
      .map((execution) => executions.interrupt(execution.sessionId, { reason: "inactivity", awaitSettlement: true }));
    // ACP asks clients to answer outstanding requests as cancelled; a turn waiting on a question settles only then.
    try {
      const services = tracked.cacheEntry.services;
      if (services !== undefined) await this.options.cancelPendingQuestions(tracked.key, services, "inactivity");
    } catch (error) {
      this.options.onError?.(error, tracked.key);
    }
    await Promise.all(settled);
    if (this.tracked.get(tracked.key.id) !== tracked) return;
    // Work admitted during the cleanup keeps the location: a turn that began, or an agent acquired or still starting.
    if (tracked.admittedDuringCleanup || executions.hasActiveAt(tracked.key.id) || this.needs.has(tracked.key.id)) {
      tracked.state = "retained";
      touchActivity(tracked, this.options.clock.elapsed(), this.options);
      this.enqueue(tracked);
      this.options.record({
        kind: "location_kept",
        directory: tracked.key.directory,
        workspace: tracked.key.workspace,
        reason: "work_admitted",
      });
      return;
    }
    await this.evict(tracked, "inactivity");
  }

  private async evict(tracked: Tracked<S>, reason: "idle" | "inactivity"): Promise<void> {
    tracked.state = "evicting";
    try {
      await this.options.cache.close(tracked.cacheEntry, reason);
    } catch (error) {
      this.options.onError?.(error, tracked.key);
    }
    if (this.tracked.get(tracked.key.id) === tracked) this.tracked.delete(tracked.key.id);
    this.options.record({
      kind: "location_evicted",
      directory: tracked.key.directory,
      workspace: tracked.key.workspace,
      reason,
    });
  }

  private onTurnBegan(execution: ActiveExecution): void {
    const tracked = this.tracked.get(execution.location.id);
    if (tracked?.state === "interrupting") tracked.admittedDuringCleanup = true;
    this.touch(execution.location);
  }

  /** A settle is a terminal event: the location gets a full idle TTL from it. */
  private onTurnSettled(settlement: Settlement): void {
    this.touch(settlement.location);
  }

  private enqueue(tracked: Tracked<S>): void {
    if (tracked.queuedDeadline !== undefined) return;
    tracked.queuedDeadline = tracked.expiresAt;
    this.deadlines.push(tracked);
  }

  private follow(cleanup: Promise<void>): void {
    this.cleanups.add(cleanup);
    const done = () => this.cleanups.delete(cleanup);
    cleanup.then(done, done);
  }

  private describe(tracked: Tracked<S>): LocationStatus {
    const wall = this.wallTime.reader();
    return {
      key: tracked.key,
      state: tracked.state,
      activeAt: wall(tracked.activeAt),
      expiresAt: wall(tracked.expiresAt),
      capAt: wall(capOf(tracked, this.options)),
      activeSessions: this.options.executions.activeAt(tracked.key.id),
    };
  }
}
