import { formatDuration } from "../config/durations.js";
import { Listeners } from "../lifecycle/listeners.js";
import type { BatchOutcome, BatchWriter, WriterListeners } from "../store/journal-writer.js";
import { callOp, type StoreCallName, type StoreCalls, type WriteOp, type WriteValue } from "../store/write-batch.js";
import type { Logger } from "./logger.js";
import { StoreHealth, StoreUnavailableError, type StoreHealthView } from "./store-health.js";

/** What to do once a unit's fate is known. */
export interface UnitOutcome {
  /** Runs once the unit is committed, with its result (what its last call op returned). */
  readonly stored?: (result: unknown) => void;
  /** Runs if SQLite refused the unit (a constraint, a session deleted meanwhile): nothing of it is stored. */
  readonly refused?: (error: string) => void;
}

/** For the log line of a unit that failed. */
export interface UnitSubject {
  readonly sessionId: string | null;
  readonly events: number;
}

interface Callback extends UnitOutcome {
  /** The unit whose commit it waits for; null: runs whatever the batch's fate (ordering only). */
  readonly unit: number | null;
}

interface Batch {
  readonly callbacks: Callback[];
  readonly units: UnitSubject[];
  /** What its units weigh (their text), for the backlog's bound. */
  bytes: number;
}

/**
 * Whether agents' output is read: `flowing`, or `held` while more than the backlog's bound waits to be stored (their
 * pipes fill and they wait on them); it flows again once half of it is stored.
 */
export type Backlog = "flowing" | "held";

/**
 * Batches handed to the writer and not committed yet, at most. While they are, what arrives waits and goes in one
 * batch (group commit): under load a batch carries many units, so handing one over, committing it and hearing back
 * cost per batch what they cost per unit before; two keep the writer busy while the next batch is handed.
 */
const MAX_IN_FLIGHT = 2;
/** A batch is handed at this many units even while the writer is busy, so none grows without bound (a store that cannot write). */
const MAX_BATCH_UNITS = 4_096;

/**
 * Every SQLite write of the host, in one ordered queue: units (written all or none) gathered
 * over one turn of the event loop, or while the writer commits the batches before them, are
 * handed to the writer thread as one batch, committed in order, and their callbacks run once
 * committed, in order. Nothing here waits on the main
 * thread: a caller that needs a write done awaits a promise ({@link call}), bounded by
 * `writeTimeout` where a client waits for it ({@link within}).
 */
export class WriteQueue {
  private values: WriteValue[] = [];
  private pending: Batch = { callbacks: [], units: [], bytes: 0 };
  private handScheduled = false;
  /** Batches handed to the writer and not yet delivered, by number. */
  private readonly inFlight = new Map<number, Batch>();
  /** Units queued or in flight, not delivered yet, and what they weigh. */
  private uncommitted = 0;
  private uncommittedBytes = 0;
  private backlog: { readonly state: "flowing" } | { readonly state: "held"; readonly since: number } = { state: "flowing" };
  private readonly backlogListeners: Listeners<Backlog>;
  /** Set while closing: failures are counted into one line instead of one line each. */
  private lostAtClose: number | undefined;
  private readonly writer: BatchWriter;
  private readonly storeHealth: StoreHealth;

  constructor(
    writerFor: (listeners: WriterListeners) => BatchWriter,
    private readonly log: Logger,
    private readonly writeTimeoutMs: number,
    /** Bytes queued and not committed past which agents' output is held. */
    private readonly backlogLimitBytes: number,
  ) {
    this.storeHealth = new StoreHealth(log);
    this.backlogListeners = new Listeners<Backlog>((error) => log.error({ err: error }, "backlog listener failed"));
    this.writer = writerFor({
      committed: (outcome) => this.committed(outcome),
      status: (status) => this.storeHealth.report(status),
      threadLost: (error) => log.error({ err: error }, "journal write failed"),
    });
  }

  /** Queues one unit: `ops` are stored all or none, after everything queued before. */
  unit(ops: readonly WriteOp[], subject: UnitSubject, outcome: UnitOutcome = {}): void {
    const unit = this.pending.units.length;
    this.values.push(ops.length);
    let bytes = 0;
    for (const op of ops) {
      this.values.push(...op);
      for (const value of op) bytes += typeof value === "string" ? value.length : 8;
    }
    this.pending.units.push(subject);
    this.pending.bytes += bytes;
    this.uncommitted++;
    this.uncommittedBytes += bytes;
    if (this.backlog.state === "flowing" && this.uncommittedBytes > this.backlogLimitBytes) this.holdBacklog();
    if (outcome.stored || outcome.refused) this.pending.callbacks.push({ unit, ...outcome });
    this.schedule();
  }

  /** Queues a store method to run on the writer's connection; settles once it is committed (or refused). Never times out. */
  call<N extends StoreCallName>(name: N, args: Parameters<StoreCalls[N]>, subject: UnitSubject = NO_SUBJECT): Promise<ReturnType<StoreCalls[N]>> {
    return new Promise((resolve, reject) =>
      this.unit([callOp(name, args)], subject, {
        stored: (result) => resolve(result as ReturnType<StoreCalls[N]>),
        refused: (error) => reject(new Error(`${name} was not stored: ${error}`)),
      }),
    );
  }

  /** Waits for `write` at most `writeTimeout`, then fails with a {@link StoreUnavailableError} saying why (the write stays queued). */
  within<T>(write: Promise<T>, what: string, whatIfLate: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        const waited = formatDuration(this.writeTimeoutMs);
        reject(
          new StoreUnavailableError(`${what} could not be stored within ${waited}: ${this.storeHealth.describe(this.uncommitted)}; ${whatIfLate}`),
        );
      }, this.writeTimeoutMs);
      write.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /** Runs `work` after everything queued so far is committed (at once if nothing is): keeps the order of what clients see. */
  afterCommit(work: () => void): void {
    if (this.pending.units.length > 0 || this.pending.callbacks.length > 0) {
      this.pending.callbacks.push({ unit: null, stored: work });
      return;
    }
    const last = this.inFlight.get(this.writer.last);
    if (last) last.callbacks.push({ unit: null, stored: work });
    else work();
  }

  /** Told when agents' output is to be held, and when it may flow again. */
  onBacklog(listener: (backlog: Backlog) => void): () => void {
    return this.backlogListeners.add(listener);
  }

  /** Whether agents' output is held now (a child started meanwhile starts held). */
  get backlogState(): Backlog {
    return this.backlog.state;
  }

  health(): StoreHealthView {
    return this.storeHealth.view(this.uncommitted);
  }

  /** Stores what is queued, waiting at most `timeoutMs` for a store that cannot write, and stops the writer thread. */
  async close(timeoutMs: number): Promise<void> {
    this.hand();
    this.lostAtClose = 0;
    await this.writer.close(timeoutMs);
    if (this.lostAtClose > 0) {
      this.log.error({ writes: this.lostAtClose, store: this.storeHealth.describe(this.uncommitted) }, "writes not stored before the host stopped");
    }
  }

  private schedule(): void {
    if (this.handScheduled) return;
    // While closing, a unit goes at once (and is refused by the stopping writer, counted in the close's line).
    const closing = this.lostAtClose !== undefined;
    if (!closing && this.inFlight.size >= MAX_IN_FLIGHT && this.pending.units.length < MAX_BATCH_UNITS) return;
    this.handScheduled = true;
    setImmediate(() => this.hand());
  }

  /** Hands what is queued to the writer now, whatever is in flight: what is queued after it must come after it (an adoption's copy). */
  handQueued(): void {
    if (this.pending.units.length > 0) this.hand();
  }

  /** Hands the queued batch to the writer thread (one transaction). */
  private hand(): void {
    this.handScheduled = false;
    const batch = this.pending;
    if (batch.units.length === 0) {
      // Only callbacks for ordering: they wait for what is in flight.
      for (const { stored } of batch.callbacks.splice(0)) this.afterCommit(() => stored?.(null));
      return;
    }
    const values = this.values;
    this.values = [];
    this.pending = { callbacks: [], units: [], bytes: 0 };
    let number: number;
    try {
      number = this.writer.write(values);
    } catch (error) {
      this.deliver(batch, { batch: 0, failed: [{ unit: -1, error: error instanceof Error ? error.message : String(error) }] });
      return;
    }
    this.inFlight.set(number, batch);
  }

  private committed(outcome: BatchOutcome): void {
    const batch = this.inFlight.get(outcome.batch);
    if (!batch) return;
    this.inFlight.delete(outcome.batch);
    this.deliver(batch, outcome);
    // What gathered while the writer was busy goes now.
    if (this.pending.units.length > 0) this.schedule();
  }

  private holdBacklog(): void {
    this.backlog = { state: "held", since: Date.now() };
    this.log.warn(
      { pendingWrites: this.uncommitted, pendingBytes: this.uncommittedBytes, store: this.storeHealth.describe(this.uncommitted) },
      "agents' output held: too much waits to be stored",
    );
    this.backlogListeners.emit("held");
  }

  private deliver(batch: Batch, outcome: BatchOutcome): void {
    this.uncommitted -= batch.units.length;
    this.uncommittedBytes -= batch.bytes;
    if (this.backlog.state === "held" && this.uncommittedBytes <= this.backlogLimitBytes / 2) {
      this.log.info({ pendingWrites: this.uncommitted, heldMs: Date.now() - this.backlog.since }, "agents' output flows again");
      this.backlog = { state: "flowing" };
      this.backlogListeners.emit("flowing");
    }
    const all = outcome.failed.some((failure) => failure.unit === -1);
    const failed = new Map(outcome.failed.map((failure) => [failure.unit, failure.error]));
    // Units of sessions another host of the fleet owns now: refused as they must be, one line for them.
    const lost = outcome.failed.filter((failure) => failure.lost);
    if (lost.length > 0 && this.lostAtClose === undefined) {
      const sessions = [...new Set(lost.flatMap((failure) => batch.units[failure.unit]?.sessionId ?? []))];
      this.log.warn({ writes: lost.length, sessions }, "writes refused: their sessions belong to another host of the fleet now");
    }
    if (outcome.failed.length > lost.length) {
      const refusals = outcome.failed.filter((failure) => !failure.lost);
      const failedUnits = new Set(refusals.map((failure) => failure.unit));
      const units = all ? batch.units : batch.units.filter((_, unit) => failedUnits.has(unit));
      if (this.lostAtClose !== undefined) this.lostAtClose += units.length;
      else {
        const sessions = [...new Set(units.flatMap((unit) => (unit.sessionId === null ? [] : [unit.sessionId])))];
        this.log.error(
          { err: refusals[0]!.error, events: units.reduce((sum, unit) => sum + unit.events, 0), writes: units.length, sessions },
          "journal write failed",
        );
      }
    }
    for (const callback of batch.callbacks) {
      try {
        if (callback.unit === null) callback.stored?.(null);
        else if (all || failed.has(callback.unit)) callback.refused?.(failed.get(callback.unit) ?? outcome.failed[0]!.error);
        else callback.stored?.(outcome.results?.[callback.unit] ?? null);
      } catch (error) {
        this.log.error({ err: error }, "journal subscriber failed");
      }
    }
  }
}

const NO_SUBJECT: UnitSubject = { sessionId: null, events: 0 };
