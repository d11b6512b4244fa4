import type { Clock, Timer } from "./clock.js";
import { deferred, type Deferred } from "./deferred.js";

/**
 * Where a session's agent child is:
 * - `childless`: none (restored after a restart, released, or lost);
 * - `live`: one child serves the session;
 * - `releasing`: the release clock fired and the child is being stopped.
 * `acquiring` is reported when a childless session has an acquisition in flight.
 */
type ChildSlot<C> =
  | { readonly name: "childless" }
  | { readonly name: "live"; readonly child: C }
  | { readonly name: "releasing"; readonly child: C; readonly done: Promise<void> };

/**
 * The turn-aware release clock of a session with a child and no holder:
 * `idle` → `armed` (grace running) → fires → `awaiting-turn-end` if a turn runs, else release.
 */
type ReleaseClock =
  | { readonly name: "idle" }
  | { readonly name: "armed"; readonly timer: Timer; readonly firesAt: number }
  | { readonly name: "awaiting-turn-end" };

export type SessionChildState = "childless" | "acquiring" | "live" | "releasing";

interface HoldTurns {
  isActive(sessionId: string): boolean;
  onSettled(listener: (settlement: { readonly sessionId: string }) => void): () => void;
}

export interface SessionHoldsOptions<C extends object> {
  readonly clock: Clock;
  readonly releaseGraceMs: number;
  /** Starts (or joins the start of) the session's agent child. */
  readonly acquire: (sessionId: string) => Promise<C>;
  /** Stops a child. Called exactly once per child. */
  readonly release: (sessionId: string, child: C) => Promise<void>;
  readonly turns: HoldTurns;
  /** Reports failures of `release` (acquisition failures reach the holder instead). */
  readonly onError?: (error: unknown, sessionId: string) => void;
}

/** One stay of one holder. Only the current incarnation of a holder id counts. */
export interface HoldTicket<C> {
  readonly sessionId: string;
  readonly holderId: string;
  readonly incarnation: number;
  /** The child this hold keeps alive; rejects with {@link AcquisitionFailedError} or {@link StaleHoldError}. */
  readonly child: Promise<C>;
  /** Leaves, if this incarnation is still the current one; returns whether it was. */
  release(): boolean;
  isCurrent(): boolean;
}

export class AcquisitionFailedError extends Error {
  override readonly name = "AcquisitionFailedError";
  constructor(
    readonly sessionId: string,
    override readonly cause: unknown,
  ) {
    super(`could not start the agent for session ${sessionId}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** The hold left or was replaced before its acquisition finished; its fence refused the child. */
export class StaleHoldError extends Error {
  override readonly name = "StaleHoldError";
  constructor(
    readonly sessionId: string,
    readonly holderId: string,
  ) {
    super(`hold of ${holderId} on session ${sessionId} ended before its agent was ready`);
  }
}

export class HoldsDisposedError extends Error {
  override readonly name = "HoldsDisposedError";
  constructor() {
    super("session holds are disposed (host shutting down)");
  }
}

/** The outcome of one incarnation's wait for a child; its promise is only made if someone asks. */
type TicketOutcome<C> =
  | { readonly name: "pending"; waiter: Deferred<C> | undefined }
  | { readonly name: "resolved"; readonly child: C }
  | { readonly name: "rejected"; readonly error: Error };

interface IncarnationOwner<C extends object> {
  isCurrent(incarnation: Incarnation<C>): boolean;
  leave(incarnation: Incarnation<C>): boolean;
}

/** A class rather than closures: holds and releases are hot, and each incarnation stays small. */
class Incarnation<C extends object> implements HoldTicket<C> {
  private outcome: TicketOutcome<C> = { name: "pending", waiter: undefined };

  constructor(
    private readonly owner: IncarnationOwner<C>,
    readonly record: SessionRecord<C>,
    readonly holderId: string,
    readonly incarnation: number,
  ) {}

  get sessionId(): string {
    return this.record.sessionId;
  }

  get child(): Promise<C> {
    const outcome = this.outcome;
    if (outcome.name === "resolved") return Promise.resolve(outcome.child);
    if (outcome.name === "rejected") return Promise.reject(outcome.error);
    if (!outcome.waiter) {
      outcome.waiter = deferred<C>();
      // Holders that never await their ticket must not surface as unhandled rejections.
      outcome.waiter.promise.catch(() => undefined);
    }
    return outcome.waiter.promise;
  }

  settle(result: { child: C } | { error: Error }): void {
    const outcome = this.outcome;
    if (outcome.name !== "pending") return;
    if ("child" in result) {
      this.outcome = { name: "resolved", child: result.child };
      outcome.waiter?.resolve(result.child);
    } else {
      this.outcome = { name: "rejected", error: result.error };
      outcome.waiter?.reject(result.error);
    }
  }

  isCurrent(): boolean {
    return this.owner.isCurrent(this);
  }

  release(): boolean {
    return this.owner.leave(this);
  }
}

interface SessionRecord<C extends object> {
  readonly sessionId: string;
  readonly holders: Map<string, Incarnation<C>>;
  slot: ChildSlot<C>;
  clock: ReleaseClock;
  acquisitions: number;
}

/**
 * Which holders want each session's agent child, and when that child is acquired and
 * released. Implements the session-hold rules of the design; no I/O of its own.
 */
export class SessionHolds<C extends object> {
  private readonly sessions = new Map<string, SessionRecord<C>>();
  /** Every child ever handed to `release`, so that none is released twice. */
  private readonly released = new WeakSet<object>();
  private nextIncarnation = 1;
  private disposed = false;
  private readonly unsubscribeTurns: () => void;
  private readonly owner: IncarnationOwner<C> = {
    isCurrent: (incarnation) =>
      this.sessions.get(incarnation.sessionId) === incarnation.record && incarnation.record.holders.get(incarnation.holderId) === incarnation,
    leave: (incarnation) => {
      if (!this.owner.isCurrent(incarnation)) return false;
      incarnation.record.holders.delete(incarnation.holderId);
      this.recheck(incarnation.record);
      return true;
    },
  };

  constructor(private readonly options: SessionHoldsOptions<C>) {
    this.unsubscribeTurns = options.turns.onSettled(({ sessionId }) => this.onTurnSettled(sessionId));
  }

  /**
   * Registers `holderId` synchronously (so callers can register their cleanup before
   * awaiting `ticket.child`). A holder that is already there gets its current ticket back.
   */
  hold(sessionId: string, holderId: string): HoldTicket<C> {
    if (this.disposed) throw new HoldsDisposedError();
    const record = this.recordOf(sessionId);
    const existing = record.holders.get(holderId);
    if (existing) return existing;

    const incarnation = this.newIncarnation(record, holderId);
    record.holders.set(holderId, incarnation);
    this.cancelClock(record);
    if (record.slot.name === "live") incarnation.settle({ child: record.slot.child });
    else this.acquireFor(record, incarnation);
    return incarnation;
  }

  /** Removes whatever incarnation of `holderId` is current. */
  release(sessionId: string, holderId: string): boolean {
    const record = this.sessions.get(sessionId);
    const incarnation = record?.holders.get(holderId);
    return incarnation ? incarnation.release() : false;
  }

  /** Explicit close: every holder leaves; a child (even one still being acquired) is released after the grace. */
  forget(sessionId: string): void {
    const record = this.sessions.get(sessionId);
    if (!record) return;
    record.holders.clear();
    this.recheck(record);
  }

  /** The child exited on its own (crash, closed stdio). Holders stay; the session becomes childless. */
  childLost(sessionId: string, child: C): void {
    const record = this.sessions.get(sessionId);
    if (!record || record.slot.name !== "live" || record.slot.child !== child) return;
    this.cancelClock(record);
    record.slot = { name: "childless" };
    this.released.add(child);
    this.dropIfUnused(record);
  }

  /** Stops every clock; late callbacks do nothing. The host's shutdown owns the children from here. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.unsubscribeTurns();
    for (const record of this.sessions.values()) this.cancelClock(record);
  }

  state(sessionId: string): SessionChildState {
    const record = this.sessions.get(sessionId);
    if (!record) return "childless";
    if (record.slot.name !== "childless") return record.slot.name;
    return record.acquisitions > 0 ? "acquiring" : "childless";
  }

  child(sessionId: string): C | undefined {
    const slot = this.sessions.get(sessionId)?.slot;
    return slot?.name === "live" ? slot.child : undefined;
  }

  holderCount(sessionId: string): number {
    return this.sessions.get(sessionId)?.holders.size ?? 0;
  }

  holderIds(sessionId: string): string[] {
    return [...(this.sessions.get(sessionId)?.holders.keys() ?? [])];
  }

  /** How many sessions the kernel keeps state for: only those with a holder, a child, an acquisition or a clock. */
  trackedSessions(): number {
    return this.sessions.size;
  }

  /** When the armed release clock fires, if it is armed. */
  releaseAt(sessionId: string): number | undefined {
    const clock = this.sessions.get(sessionId)?.clock;
    return clock?.name === "armed" ? clock.firesAt : undefined;
  }

  /** Whether an unheld child is waiting for its running turn to end before the grace starts. */
  awaitingTurnEnd(sessionId: string): boolean {
    return this.sessions.get(sessionId)?.clock.name === "awaiting-turn-end";
  }

  private recordOf(sessionId: string): SessionRecord<C> {
    let record = this.sessions.get(sessionId);
    if (!record) {
      record = { sessionId, holders: new Map(), slot: { name: "childless" }, clock: { name: "idle" }, acquisitions: 0 };
      this.sessions.set(sessionId, record);
    }
    return record;
  }

  private newIncarnation(record: SessionRecord<C>, holderId: string): Incarnation<C> {
    return new Incarnation(this.owner, record, holderId, this.nextIncarnation++);
  }

  private acquireFor(record: SessionRecord<C>, incarnation: Incarnation<C>): void {
    record.acquisitions++;
    // After disposal nothing new may start, even an acquisition that waited for a release.
    const start = () => (this.disposed ? Promise.reject(new HoldsDisposedError()) : this.options.acquire(record.sessionId));
    // A new child starts only once the previous one is stopped: one agent process per session.
    const acquisition = record.slot.name === "releasing" ? record.slot.done.then(start) : new Promise<C>((resolve) => resolve(start()));
    void acquisition.then(
      (child) => this.acquired(record, incarnation, child),
      (error: unknown) => this.acquisitionFailed(record, incarnation, error),
    );
  }

  private acquired(record: SessionRecord<C>, incarnation: Incarnation<C>, child: C): void {
    record.acquisitions--;
    if (this.disposed) {
      incarnation.settle({ error: new HoldsDisposedError() });
      return;
    }
    if (this.released.has(child)) {
      // The acquirer handed back a child that is already stopped or lost: that is a failed acquisition.
      this.acquisitionFailed(record, incarnation, new Error("the acquired agent child had already exited"), false);
      return;
    }
    if (record.slot.name === "live" && record.slot.child !== child) {
      // Two acquisitions produced two children; the session keeps the first, the surplus must not leak.
      this.releaseChild(record, child, false);
    } else if (record.slot.name !== "live") {
      record.slot = { name: "live", child };
    }
    const live = record.slot.name === "live" ? record.slot.child : child;
    if (incarnation.isCurrent()) incarnation.settle({ child: live });
    else incarnation.settle({ error: new StaleHoldError(record.sessionId, incarnation.holderId) });
    this.recheck(record);
  }

  private acquisitionFailed(record: SessionRecord<C>, incarnation: Incarnation<C>, error: unknown, count = true): void {
    if (count) record.acquisitions--;
    incarnation.settle({ error: new AcquisitionFailedError(record.sessionId, error) });
    if (this.disposed) return;
    // Only the incarnation that relied on this acquisition goes; a replacement of the same id stays.
    if (incarnation.isCurrent()) record.holders.delete(incarnation.holderId);
    this.recheck(record);
  }

  /** Restores the invariant: a live child with no holder always has its release clock running. */
  private recheck(record: SessionRecord<C>): void {
    if (this.disposed) return;
    if (record.holders.size > 0 || record.slot.name !== "live") {
      if (record.holders.size > 0) this.cancelClock(record);
      this.dropIfUnused(record);
      return;
    }
    if (record.clock.name === "idle") this.armClock(record);
  }

  private armClock(record: SessionRecord<C>): void {
    const firesAt = this.options.clock.now() + this.options.releaseGraceMs;
    const timer = this.options.clock.setTimeout(() => this.clockFired(record, timer), this.options.releaseGraceMs);
    record.clock = { name: "armed", timer, firesAt };
  }

  private clockFired(record: SessionRecord<C>, timer: Timer): void {
    if (this.disposed || record.clock.name !== "armed" || record.clock.timer !== timer) return;
    record.clock = { name: "idle" };
    if (record.holders.size > 0 || record.slot.name !== "live") return;
    if (this.options.turns.isActive(record.sessionId)) {
      record.clock = { name: "awaiting-turn-end" };
      return;
    }
    this.releaseChild(record, record.slot.child, true);
  }

  private onTurnSettled(sessionId: string): void {
    const record = this.sessions.get(sessionId);
    if (!record || record.clock.name !== "awaiting-turn-end") return;
    record.clock = { name: "idle" };
    this.recheck(record);
  }

  private releaseChild(record: SessionRecord<C>, child: C, isSlotChild: boolean): void {
    if (this.released.has(child)) return;
    this.released.add(child);
    const done = Promise.resolve()
      .then(() => this.options.release(record.sessionId, child))
      .catch((error: unknown) => this.options.onError?.(error, record.sessionId));
    if (!isSlotChild) return;
    record.slot = { name: "releasing", child, done };
    void done.then(() => {
      if (record.slot.name === "releasing" && record.slot.child === child) record.slot = { name: "childless" };
      this.dropIfUnused(record);
    });
  }

  private cancelClock(record: SessionRecord<C>): void {
    if (record.clock.name === "armed") record.clock.timer.cancel();
    record.clock = { name: "idle" };
  }

  /** Forgets a session that has nothing left: keeps memory bounded by the sessions in use. */
  private dropIfUnused(record: SessionRecord<C>): void {
    if (
      record.holders.size === 0 &&
      record.slot.name === "childless" &&
      record.acquisitions === 0 &&
      record.clock.name === "idle" &&
      this.sessions.get(record.sessionId) === record
    ) {
      this.sessions.delete(record.sessionId);
    }
  }
}
