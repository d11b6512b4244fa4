import type { Clock } from "./clock.js";
import { Deadlines } from "./deadlines.js";
import { deferred, type Deferred } from "./deferred.js";
import { WallTime } from "./wall-time.js";

/**
 * Where a session's agent child is:
 * - `childless`: none (restored after a restart, stopped, or lost);
 * - `live`: one child serves the session;
 * - `stopping`: the release clock fired and the child is being stopped (`state()` says `releasing`, the API's word).
 * `acquiring` is reported when a childless session has an acquisition in flight.
 */
type ChildSlot<C> =
  | { readonly name: "childless" }
  | { readonly name: "live"; readonly child: C }
  | { readonly name: "stopping"; readonly child: C; readonly done: Promise<void> };

/**
 * The turn-aware release clock of a session with a child and no holder:
 * `idle` → `armed` (grace running) → fires → `awaiting-turn-end` if a turn runs, else the child is stopped.
 */
type ReleaseClock = { readonly name: "idle" } | { readonly name: "armed" } | { readonly name: "awaiting-turn-end" };
// Shared: arming the clock is on the path of every hold, and its deadline is the release clocks' (`Deadlines`) to keep.
const IDLE: ReleaseClock = { name: "idle" };
const ARMED: ReleaseClock = { name: "armed" };
const AWAITING_TURN_END: ReleaseClock = { name: "awaiting-turn-end" };

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
  readonly stop: (sessionId: string, child: C) => Promise<void>;
  readonly turns: HoldTurns;
  /** Reports failures of `stop` (acquisition failures reach the holder instead). */
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

export class HoldsClosedError extends Error {
  override readonly name = "HoldsClosedError";
  constructor() {
    super("session holds are closed (the host is shutting down)");
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
    readonly entry: SessionEntry<C>,
    readonly holderId: string,
    readonly incarnation: number,
  ) {}

  get sessionId(): string {
    return this.entry.sessionId;
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

interface SessionEntry<C extends object> {
  readonly sessionId: string;
  readonly holders: Map<string, Incarnation<C>>;
  slot: ChildSlot<C>;
  clock: ReleaseClock;
  acquisitions: number;
}

/**
 * Which holders want each session's agent child, and when that child is acquired and
 * stopped. Implements the session-hold rules H1–H8 (ARCHITECTURE.md#session-holds); no I/O of its own.
 */
export class SessionHolds<C extends object> {
  private readonly sessions = new Map<string, SessionEntry<C>>();
  /** Every child ever handed to `stop` (or lost), so that none is stopped twice. */
  private readonly stopped = new WeakSet<object>();
  private nextIncarnation = 1;
  private closed = false;
  private readonly unsubscribeTurns: () => void;
  /** Every armed release clock, on one timer of the clock (arming and cancelling one is on the path of every hold). */
  private readonly releaseClocks: Deadlines<SessionEntry<C>>;
  /** Tells `releaseAt` (a deadline on elapsed time) in wall time. */
  private readonly wallTime: WallTime;
  private readonly owner: IncarnationOwner<C> = {
    isCurrent: (incarnation) =>
      this.sessions.get(incarnation.sessionId) === incarnation.entry && incarnation.entry.holders.get(incarnation.holderId) === incarnation,
    leave: (incarnation) => {
      if (!this.owner.isCurrent(incarnation)) return false;
      incarnation.entry.holders.delete(incarnation.holderId);
      this.recheck(incarnation.entry);
      return true;
    },
  };

  constructor(private readonly options: SessionHoldsOptions<C>) {
    this.unsubscribeTurns = options.turns.onSettled(({ sessionId }) => this.onTurnSettled(sessionId));
    this.releaseClocks = new Deadlines(options.clock, (entry) => this.clockFired(entry));
    this.wallTime = new WallTime(options.clock);
  }

  /**
   * Registers `holderId` synchronously (so callers can register their cleanup before
   * awaiting `ticket.child`). A holder that is already there gets its current ticket back.
   */
  hold(sessionId: string, holderId: string): HoldTicket<C> {
    if (this.closed) throw new HoldsClosedError();
    const entry = this.entryOf(sessionId);
    const existing = entry.holders.get(holderId);
    if (existing) return existing;

    const incarnation = this.newIncarnation(entry, holderId);
    entry.holders.set(holderId, incarnation);
    this.cancelClock(entry);
    if (entry.slot.name === "live") incarnation.settle({ child: entry.slot.child });
    else this.acquireFor(entry, incarnation);
    return incarnation;
  }

  /** Removes whatever incarnation of `holderId` is current. */
  release(sessionId: string, holderId: string): boolean {
    const entry = this.sessions.get(sessionId);
    const incarnation = entry?.holders.get(holderId);
    return incarnation ? incarnation.release() : false;
  }

  /** Every holder leaves at once (the session is being deleted); a child, even one still being acquired, is stopped after the grace. */
  releaseAll(sessionId: string): void {
    const entry = this.sessions.get(sessionId);
    if (!entry) return;
    entry.holders.clear();
    this.recheck(entry);
  }

  /** The child exited on its own (crash, closed stdio). Holders stay; the session becomes childless. */
  childLost(sessionId: string, child: C): void {
    const entry = this.sessions.get(sessionId);
    if (!entry || entry.slot.name !== "live" || entry.slot.child !== child) return;
    this.cancelClock(entry);
    entry.slot = { name: "childless" };
    this.stopped.add(child);
    this.forgetIfUnused(entry);
  }

  /** Closes the holds (the "disposal" of ARCHITECTURE.md#h6): every clock is cancelled, no hold is admitted, late callbacks do nothing. The host's shutdown owns the children from here. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribeTurns();
    for (const entry of this.sessions.values()) this.cancelClock(entry);
    this.releaseClocks.close();
  }

  state(sessionId: string): SessionChildState {
    const entry = this.sessions.get(sessionId);
    if (!entry) return "childless";
    if (entry.slot.name !== "childless") return entry.slot.name === "stopping" ? "releasing" : entry.slot.name;
    return entry.acquisitions > 0 ? "acquiring" : "childless";
  }

  child(sessionId: string): C | undefined {
    const slot = this.sessions.get(sessionId)?.slot;
    return slot?.name === "live" ? slot.child : undefined;
  }

  /** Every child the kernel holds live, of any session. */
  liveChildren(): C[] {
    return [...this.sessions.values()].flatMap((entry) => (entry.slot.name === "live" ? [entry.slot.child] : []));
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
    const entry = this.sessions.get(sessionId);
    const dueAt = entry?.clock.name === "armed" ? this.releaseClocks.dueAt(entry) : undefined;
    return dueAt === undefined ? undefined : this.wallTime.of(dueAt);
  }

  /** Whether an unheld child is waiting for its running turn to end before the grace starts. */
  awaitingTurnEnd(sessionId: string): boolean {
    return this.sessions.get(sessionId)?.clock.name === "awaiting-turn-end";
  }

  private entryOf(sessionId: string): SessionEntry<C> {
    let entry = this.sessions.get(sessionId);
    if (!entry) {
      entry = { sessionId, holders: new Map(), slot: { name: "childless" }, clock: IDLE, acquisitions: 0 };
      this.sessions.set(sessionId, entry);
    }
    return entry;
  }

  private newIncarnation(entry: SessionEntry<C>, holderId: string): Incarnation<C> {
    return new Incarnation(this.owner, entry, holderId, this.nextIncarnation++);
  }

  private acquireFor(entry: SessionEntry<C>, incarnation: Incarnation<C>): void {
    entry.acquisitions++;
    // Once closed nothing new may start, even an acquisition that waited for a stop.
    const start = () => (this.closed ? Promise.reject(new HoldsClosedError()) : this.options.acquire(entry.sessionId));
    // A new child starts only once the previous one is stopped: one agent process per session.
    const acquisition = entry.slot.name === "stopping" ? entry.slot.done.then(start) : new Promise<C>((resolve) => resolve(start()));
    void acquisition.then(
      (child) => this.acquired(entry, incarnation, child),
      (error: unknown) => this.acquisitionFailed(entry, incarnation, error),
    );
  }

  private acquired(entry: SessionEntry<C>, incarnation: Incarnation<C>, child: C): void {
    entry.acquisitions--;
    if (this.closed) {
      incarnation.settle({ error: new HoldsClosedError() });
      return;
    }
    if (this.stopped.has(child)) {
      // The acquirer handed back a child that is already stopped or lost: that is a failed acquisition.
      this.acquisitionFailed(entry, incarnation, new Error("the acquired agent child had already exited"), false);
      return;
    }
    if (entry.slot.name === "live" && entry.slot.child !== child) {
      // Two acquisitions produced two children; the session keeps the first, the surplus must not leak.
      this.stopChild(entry, child, false);
    } else if (entry.slot.name !== "live") {
      entry.slot = { name: "live", child };
    }
    const live = entry.slot.name === "live" ? entry.slot.child : child;
    if (incarnation.isCurrent()) incarnation.settle({ child: live });
    else incarnation.settle({ error: new StaleHoldError(entry.sessionId, incarnation.holderId) });
    this.recheck(entry);
  }

  private acquisitionFailed(entry: SessionEntry<C>, incarnation: Incarnation<C>, error: unknown, count = true): void {
    if (count) entry.acquisitions--;
    incarnation.settle({ error: new AcquisitionFailedError(entry.sessionId, error) });
    if (this.closed) return;
    // Only the incarnation that relied on this acquisition goes; a replacement of the same id stays.
    if (incarnation.isCurrent()) entry.holders.delete(incarnation.holderId);
    this.recheck(entry);
  }

  /** Restores the invariant: a live child with no holder always has its release clock running. */
  private recheck(entry: SessionEntry<C>): void {
    if (this.closed) return;
    if (entry.holders.size > 0 || entry.slot.name !== "live") {
      if (entry.holders.size > 0) this.cancelClock(entry);
      this.forgetIfUnused(entry);
      return;
    }
    if (entry.clock.name === "idle") this.armClock(entry);
  }

  private armClock(entry: SessionEntry<C>): void {
    this.releaseClocks.set(entry, this.options.releaseGraceMs);
    entry.clock = ARMED;
  }

  private clockFired(entry: SessionEntry<C>): void {
    if (this.closed || entry.clock.name !== "armed") return;
    entry.clock = IDLE;
    if (entry.holders.size > 0 || entry.slot.name !== "live") return;
    if (this.options.turns.isActive(entry.sessionId)) {
      entry.clock = AWAITING_TURN_END;
      return;
    }
    this.stopChild(entry, entry.slot.child, true);
  }

  private onTurnSettled(sessionId: string): void {
    const entry = this.sessions.get(sessionId);
    if (!entry || entry.clock.name !== "awaiting-turn-end") return;
    entry.clock = IDLE;
    this.recheck(entry);
  }

  private stopChild(entry: SessionEntry<C>, child: C, isSlotChild: boolean): void {
    if (this.stopped.has(child)) return;
    this.stopped.add(child);
    const done = Promise.resolve()
      .then(() => this.options.stop(entry.sessionId, child))
      .catch((error: unknown) => this.options.onError?.(error, entry.sessionId));
    if (!isSlotChild) return;
    entry.slot = { name: "stopping", child, done };
    void done.then(() => {
      if (entry.slot.name === "stopping" && entry.slot.child === child) entry.slot = { name: "childless" };
      this.forgetIfUnused(entry);
    });
  }

  private cancelClock(entry: SessionEntry<C>): void {
    if (entry.clock.name === "armed") this.releaseClocks.clear(entry);
    entry.clock = IDLE;
  }

  /** Forgets a session that has nothing left: keeps memory bounded by the sessions in use. */
  private forgetIfUnused(entry: SessionEntry<C>): void {
    if (
      entry.holders.size === 0 &&
      entry.slot.name === "childless" &&
      entry.acquisitions === 0 &&
      entry.clock.name === "idle" &&
      this.sessions.get(entry.sessionId) === entry
    ) {
      this.sessions.delete(entry.sessionId);
    }
  }
}
