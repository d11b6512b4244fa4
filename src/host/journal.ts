import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Clock } from "../lifecycle/clock.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import type { SequencedEvent } from "../store/events.js";
import { JournalWriter } from "../store/journal-writer.js";
import type { Store } from "../store/store.js";
import type { Logger } from "./logger.js";
import type { SessionBus } from "./session-bus.js";

/** The kinds of durable events in a session's journal. */
export type JournalKind =
  | "turn_started"
  | "update"
  | "turn_ended"
  | "question_asked"
  | "question_resolved"
  | "interrupted"
  | "agent_exited";


/**
 * Records durable events: appended to the session's journal, counted as progress for its
 * location, and (for updates) streamed to its subscribers at once. Writes are grouped into one
 * transaction per turn of the event loop and stored by a writer thread, so a fast stream of
 * updates never stalls the relay; `flush()` makes them readable. A failed write is logged and
 * the live stream carries on; what is stored stays intact.
 */
export class Journal {
  private readonly nextSeq = new Map<string, number>();
  private pending: SequencedEvent[] = [];
  private flushScheduled = false;
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
      // Clients already saw these events with their seqs: numbering goes on (a gap marks the loss), never reuses one.
      (failure) => this.log.error({ err: failure.error, events: failure.events, sessions: failure.sessionIds }, "journal write failed"),
      (batch) => store.events.appendSequenced(batch),
    );
  }

  /**
   * Numbers and queues one event; returns its seq, or 0 when it cannot be journaled (the session
   * was deleted meanwhile, the journal is failing). Never throws: it runs inside agents' streams.
   */
  append(sessionId: string, key: LocationKey, kind: JournalKind, payload: unknown): number {
    let seq = this.nextSeq.get(sessionId);
    if (seq === undefined) {
      try {
        seq = this.storedLastSeq(sessionId) + 1;
      } catch (error) {
        this.log.warn({ err: error, sessionId, kind }, "event not journaled");
        return 0;
      }
    }
    this.nextSeq.set(sessionId, seq + 1);
    this.pending.push({ sessionId, seq, kind, payload, at: this.clock.now() });
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.hand());
    }
    this.touchLocation(key);
    return seq;
  }

  /** An update from the agent, with the notification's own `_meta` if it had one. */
  update(sessionId: string, key: LocationKey, update: SessionUpdate, meta?: Record<string, unknown> | null): number {
    const seq = this.append(sessionId, key, "update", meta ? { update, _meta: meta } : { update });
    this.bus.publish(sessionId, { type: "update", seq, notification: meta ? { sessionId, update, _meta: meta } : { sessionId, update } });
    return seq;
  }

  /** A notice from Berth itself in the session's transcript (interruptions, crashes), so every client sees it. */
  notice(sessionId: string, key: LocationKey, text: string, meta: Record<string, unknown>): number {
    return this.update(sessionId, key, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text },
      _meta: { "berth/notice": meta },
    });
  }

  /** Stores every pending event now and waits until it is readable. */
  flush(): void {
    this.hand();
    this.writer.sync();
  }

  /** The session is gone: forget its sequence. */
  forget(sessionId: string): void {
    this.flush();
    this.nextSeq.delete(sessionId);
  }

  /** Stores what is pending and stops the writer thread. */
  async close(): Promise<void> {
    this.hand();
    await this.writer.close();
  }

  /** Hands the pending batch to the writer thread (one transaction). */
  private hand(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    try {
      this.writer.write(batch);
    } catch (error) {
      this.log.error({ err: error, events: batch.length }, "journal write failed");
    }
  }

  /** The last stored seq of a session this journal has not numbered yet (after in-flight writes land). */
  private storedLastSeq(sessionId: string): number {
    this.writer.sync();
    return this.store.events.lastSeq(sessionId);
  }
}
