import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Clock } from "../lifecycle/clock.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import { JournalWriter, type BatchOutcome } from "../store/journal-writer.js";
import type { Store } from "../store/store.js";
import type { WriteValue } from "../store/write-batch.js";
import type { Logger } from "./logger.js";
import type { SessionBus } from "./session-bus.js";

/** The kinds of durable events in a session's journal. */
export type JournalKind = "turn_started" | "update" | "turn_ended" | "question_asked" | "question_resolved" | "interrupted" | "agent_exited";

/** One more write op (see `write-batch.ts`) stored in the same transaction as an event. */
export type WriteOp = readonly [code: string, WriteValue, WriteValue, WriteValue, WriteValue, WriteValue];

export interface AppendOptions {
  /** Stored with the event, all or nothing (a question's row with its `question_asked`). */
  readonly with?: readonly WriteOp[];
  /** Runs once the event is committed, in order with every other event and `afterCommit`; never if it was not stored. */
  readonly then?: (seq: number) => void;
  /** The payload as JSON text already (the agent's line as it came): stored without encoding. */
  readonly text?: string;
}

interface Callback {
  /** The unit whose commit it waits for; null: runs whatever the batch's fate (ordering only). */
  readonly unit: number | null;
  readonly run: () => void;
}

interface Batch {
  readonly callbacks: Callback[];
  /** For each unit, the events it holds (reported if it fails). */
  readonly units: Array<{ sessionId: string | null; events: number }>;
}

/**
 * The host's one writer, and the journal it keeps. Every SQLite write of the host goes
 * through it:
 *
 * - events (and the writes that belong to them, such as a question's row), session touches,
 *   titles and lifecycle records are queued and committed in one transaction per turn of the
 *   event loop by the writer thread (`src/store/journal-writer.ts`): the event loop never
 *   waits on a database lock;
 * - rare writes that must be done before the caller goes on (a session created or deleted,
 *   a process group recorded, a question answered) run in {@link exclusive}: the thread is
 *   drained first, so the main connection writes alone and waits on no lock either.
 *
 * **Committed before seen**: an event or a lifecycle record reaches subscribers (`then`,
 * {@link afterCommit}, the bus, the record listeners) only after its transaction committed. Sequence numbers are drawn in memory as events
 * are queued, but no one outside this class sees one before it is committed, so a number lost
 * in a crash was never seen, and numbering after a restart (the stored maximum + 1) never
 * gives a seen number twice. A batch that fails (disk full) is reported and not delivered.
 */
export class Journal {
  private readonly nextSeq = new Map<string, number>();
  private values: WriteValue[] = [];
  private pending: Batch = { callbacks: [], units: [] };
  private flushScheduled = false;
  /** Batches handed to the writer and not yet delivered, by number. */
  private readonly inFlight = new Map<number, Batch>();
  /** The last batch holding a session touch or title, and whether the pending one does. */
  private lastSessionWrite = 0;
  private pendingSessionWrite = false;
  private readonly writer: JournalWriter;

  constructor(
    private readonly store: Store,
    private readonly bus: SessionBus,
    private readonly touchLocation: (key: LocationKey) => void,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.writer = new JournalWriter(
      store.path,
      (outcome) => this.committed(outcome),
      (values) => store.batches.apply(values),
      (error) => this.log.error({ err: error }, "journal write failed"),
    );
  }

  /**
   * Numbers and queues one event. Never throws: it runs inside agents' streams. Returns false
   * when it cannot be journaled (the session is unknown, the journal is failing).
   */
  append(sessionId: string, key: LocationKey, kind: JournalKind, payload: unknown, options: AppendOptions = {}): boolean {
    let seq = this.nextSeq.get(sessionId);
    let text: string;
    try {
      if (seq === undefined) seq = this.storedLastSeq(sessionId) + 1;
      text = options.text ?? JSON.stringify(payload);
    } catch (error) {
      this.log.warn({ err: error, sessionId, kind }, "event not journaled");
      return false;
    }
    this.nextSeq.set(sessionId, seq + 1);
    const extra = options.with ?? [];
    const unit = this.pending.units.length;
    this.values.push(1 + extra.length, "e", sessionId, seq, kind, text, this.clock.now());
    for (const op of extra) this.values.push(...op);
    this.pending.units.push({ sessionId, events: 1 });
    const then = options.then;
    if (then) this.pending.callbacks.push({ unit, run: () => then(seq) });
    this.schedule();
    this.touchLocation(key);
    return true;
  }

  /** An update from the agent, with the notification's own `_meta` if it had one; `line`: the agent's message as it came. */
  update(sessionId: string, key: LocationKey, update: SessionUpdate, meta?: Record<string, unknown> | null, line?: string): void {
    const notification = meta ? { sessionId, update, _meta: meta } : { sessionId, update };
    this.append(sessionId, key, "update", meta ? { update, _meta: meta } : { update }, {
      ...(line === undefined ? {} : { text: line }),
      then: (seq) => this.bus.publish(sessionId, { type: "update", seq, notification }),
    });
  }

  /** A notice from Berth itself in the session's transcript (interruptions, crashes), so every client sees it. */
  notice(sessionId: string, key: LocationKey, text: string, meta: Record<string, unknown>): void {
    this.update(sessionId, key, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text },
      _meta: { "berth/notice": meta },
    });
  }

  /** Runs `work` after everything queued so far is committed (at once if nothing is): keeps the order of what clients see. */
  afterCommit(work: () => void): void {
    if (this.pending.units.length > 0 || this.pending.callbacks.length > 0) {
      this.pending.callbacks.push({ unit: null, run: work });
      return;
    }
    const last = this.inFlight.get(this.writer.last);
    if (last) last.callbacks.push({ unit: null, run: work });
    else work();
  }

  /** The session was active: its `updated_at` moves (never backwards). Queued. */
  touchSession(sessionId: string, at: number): void {
    this.queue(["t", sessionId, at, null, null, null]);
    this.pendingSessionWrite = true;
  }

  /** The session's title, if it has none yet. Queued. */
  titleSession(sessionId: string, title: string): void {
    this.queue(["n", sessionId, title, null, null, null]);
    this.pendingSessionWrite = true;
  }

  /** A lifecycle record with the id the host gave it. Queued; `then` runs once it is committed, never if it was not stored. */
  record(id: number, kind: string, payload: unknown, at: number, then?: () => void): void {
    const unit = this.pending.units.length;
    this.queue(["r", id, kind, JSON.stringify(payload), at, null]);
    if (then) this.pending.callbacks.push({ unit, run: then });
  }

  /** Waits until queued session touches and titles are committed, so views read them. */
  settleSessions(): void {
    if (this.pendingSessionWrite) this.hand();
    if (this.lastSessionWrite > this.writer.committed) this.writer.sync(this.lastSessionWrite);
  }

  /**
   * Runs a write that must be stored before the caller goes on, on the main connection: the
   * queue is committed (and delivered) first, so this connection writes alone.
   */
  exclusive<T>(work: () => T): T {
    this.flush();
    return work();
  }

  /**
   * Numbers and stores one event at once, on the main connection; only inside {@link exclusive}
   * (in the same transaction as what it records). Returns its seq, 0 if the session is unknown.
   */
  appendNow(sessionId: string, kind: JournalKind, payload: unknown): number {
    const seq = this.nextSeq.get(sessionId) ?? this.storedLastSeq(sessionId) + 1;
    this.nextSeq.set(sessionId, seq + 1);
    this.store.events.appendSequenced([{ sessionId, seq, kind, payload, at: this.clock.now() }]);
    return seq;
  }

  /** Commits every queued write now and delivers it. */
  flush(): void {
    this.hand();
    this.writer.sync();
  }

  /** The session is gone: forget its sequence. */
  forget(sessionId: string): void {
    this.flush();
    this.nextSeq.delete(sessionId);
  }

  /** Stores what is queued and stops the writer thread. */
  async close(): Promise<void> {
    this.hand();
    await this.writer.close();
  }

  private queue(op: WriteOp): void {
    this.values.push(1, ...op);
    this.pending.units.push({ sessionId: null, events: 0 });
    this.schedule();
  }

  private schedule(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.hand());
  }

  /** Hands the queued batch to the writer thread (one transaction). */
  private hand(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    if (batch.units.length === 0) {
      // Only callbacks for ordering: they wait for what is in flight.
      const callbacks = batch.callbacks.splice(0);
      for (const callback of callbacks) this.afterCommit(callback.run);
      return;
    }
    const values = this.values;
    this.values = [];
    this.pending = { callbacks: [], units: [] };
    const sessionWrite = this.pendingSessionWrite;
    this.pendingSessionWrite = false;
    let number: number;
    try {
      number = this.writer.write(values);
    } catch (error) {
      this.log.error({ err: error, events: countEvents(batch) }, "journal write failed");
      return;
    }
    if (sessionWrite) this.lastSessionWrite = number;
    // Inline writing (thread gone) delivers within `write`: nothing is in flight then.
    if (this.writer.committed < number) this.inFlight.set(number, batch);
    else this.deliver(batch, { batch: number, failed: this.lastFailed });
  }

  private lastFailed: BatchOutcome["failed"] = [];

  private committed(outcome: BatchOutcome): void {
    const batch = this.inFlight.get(outcome.batch);
    if (!batch) {
      // Inline: `hand` delivers it once `write` returned.
      this.lastFailed = outcome.failed;
      return;
    }
    this.inFlight.delete(outcome.batch);
    this.deliver(batch, outcome);
  }

  private deliver(batch: Batch, outcome: BatchOutcome): void {
    const all = outcome.failed.some((failure) => failure.unit === -1);
    const failed = new Set(outcome.failed.map((failure) => failure.unit));
    if (outcome.failed.length > 0) {
      const units = all ? batch.units : batch.units.filter((_, unit) => failed.has(unit));
      const sessions = [...new Set(units.flatMap((unit) => (unit.sessionId === null ? [] : [unit.sessionId])))];
      this.log.error(
        { err: outcome.failed[0]!.error, events: units.reduce((sum, unit) => sum + unit.events, 0), writes: units.length, sessions },
        "journal write failed",
      );
    }
    for (const callback of batch.callbacks) {
      if (callback.unit !== null && (all || failed.has(callback.unit))) continue;
      try {
        callback.run();
      } catch (error) {
        this.log.error({ err: error }, "journal subscriber failed");
      }
    }
  }

  /** The last stored seq of a session this journal has not numbered yet (after in-flight writes land). */
  private storedLastSeq(sessionId: string): number {
    this.writer.sync();
    return this.store.events.lastSeq(sessionId);
  }
}

function countEvents(batch: Batch): number {
  return batch.units.reduce((sum, unit) => sum + unit.events, 0);
}
