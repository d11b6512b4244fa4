import type { SqliteDatabase } from "./database.js";
import { StoreInputError, StoreNotFoundError } from "./errors.js";
import { decodeJson, encodeJson, requireCount, requireText, requireTimestamp, type Json } from "./input.js";
import { guardWrite } from "./write-guard.js";

/** One durable event of a session's journal. */
export interface JournalEvent {
  sessionId: string;
  /** 1, 2, 3... per session, without gaps. */
  seq: number;
  /** e.g. `turn_started`, `update`, `turn_ended`, `question_asked`, `question_answered`, `interrupted`, `prompt`. */
  kind: string;
  payload: Json;
  at: number;
}

export interface ReadOptions {
  /** Only events with a greater seq (default 0: from the start). */
  after?: number;
  /** At most this many events (default: all). */
  limit?: number;
}

export interface ReplayOptions {
  after?: number;
  /** Rows fetched per query; memory use is bounded by one page. */
  pageSize?: number;
}

interface EventRow {
  sessionId: string;
  seq: number;
  kind: string;
  payload: string;
  at: number;
}

const DEFAULT_PAGE_SIZE = 1_000;

export class EventJournal {
  readonly #claimSeq;
  readonly #insert;
  readonly #read;
  readonly #lastSeq;
  readonly #appendInTransaction;

  constructor(db: SqliteDatabase) {
    // Appending is durable progress, so the session's updatedAt follows its newest event.
    this.#claimSeq = db
      .prepare<[number, string], number>(
        `UPDATE sessions SET next_seq = next_seq + 1, updated_at = max(updated_at, ?)
         WHERE id = ? RETURNING next_seq - 1`,
      )
      .pluck();
    this.#insert = db.prepare<[string, number, string, string, number]>(
      "INSERT INTO events (session_id, seq, kind, payload, at) VALUES (?, ?, ?, ?, ?)",
    );
    this.#read = db.prepare<[string, number, number], EventRow>(
      `SELECT session_id AS sessionId, seq, kind, payload, at FROM events
       WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    );
    this.#lastSeq = db.prepare<[string], number>("SELECT next_seq - 1 FROM sessions WHERE id = ?").pluck();
    this.#appendInTransaction = db.transaction((sessionId: string, kind: string, payload: string, at: number) => {
      const seq = this.#claimSeq.get(at, sessionId);
      if (seq === undefined) throw new StoreNotFoundError("events.append", "session", sessionId);
      this.#insert.run(sessionId, seq, kind, payload, at);
      return seq;
    });
  }

  /** Appends one event and returns its seq. Group several appends atomically with `Store.transaction`. */
  append(sessionId: string, kind: string, payload: unknown, at: number): number {
    const op = "events.append";
    const args = [
      requireText(op, "sessionId", sessionId),
      requireText(op, "kind", kind),
      encodeJson(op, "payload", payload),
      requireTimestamp(op, "at", at),
    ] as const;
    return guardWrite(op, () => this.#appendInTransaction(...args));
  }

  /** Events in seq order; throws `StoreNotFoundError` for an unknown session. */
  read(sessionId: string, options: ReadOptions = {}): JournalEvent[] {
    const op = "events.read";
    const after = requireCount(op, "after", options.after ?? 0);
    const limit = options.limit === undefined ? -1 : requireCount(op, "limit", options.limit);
    this.#requireSession(op, sessionId);
    return this.#read.all(sessionId, after, limit).map(toEvent);
  }

  /**
   * Iterates a session's events in seq order, one page at a time, so a huge journal is never in memory
   * at once. No statement stays open between pages, so appending while replaying is fine; events appended
   * before the last page is read are included.
   */
  replay(sessionId: string, options: ReplayOptions = {}): IterableIterator<JournalEvent> {
    const op = "events.replay";
    const after = requireCount(op, "after", options.after ?? 0);
    const pageSize = requireCount(op, "pageSize", options.pageSize ?? DEFAULT_PAGE_SIZE);
    if (pageSize === 0) throw new StoreInputError(op, "pageSize must be at least 1");
    this.#requireSession(op, sessionId);
    return this.#pages(sessionId, after, pageSize);
  }

  /** The seq of the session's newest event, 0 if it has none. */
  lastSeq(sessionId: string): number {
    return this.#requireSession("events.lastSeq", sessionId);
  }

  #requireSession(op: string, sessionId: string): number {
    const seq = this.#lastSeq.get(sessionId);
    if (seq === undefined) throw new StoreNotFoundError(op, "session", sessionId);
    return seq;
  }

  *#pages(sessionId: string, after: number, pageSize: number): Generator<JournalEvent, void, undefined> {
    let cursor = after;
    for (;;) {
      const rows = this.#read.all(sessionId, cursor, pageSize);
      for (const row of rows) yield toEvent(row);
      const last = rows.at(-1);
      if (last === undefined || rows.length < pageSize) return;
      cursor = last.seq;
    }
  }
}

function toEvent(row: EventRow): JournalEvent {
  return { ...row, payload: decodeJson(row.payload) };
}
