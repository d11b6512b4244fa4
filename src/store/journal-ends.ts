import type { SqliteDatabase } from "./database.js";
import type { EventJournal, MessagePreview, TurnOutcome } from "./events.js";

/** What a list shows of the end of a session's journal. */
export interface JournalEnd {
  /** `EventJournal.lastWords`. */
  readonly preview: MessagePreview | null;
  /** `EventJournal.lastOutcome`. */
  readonly lastTurn: TurnOutcome | null;
  /** Pending questions. */
  readonly pendingQuestions: number;
}

interface Kept {
  readonly lastSeq: number;
  readonly createdAt: number;
  readonly preview: MessagePreview | null;
  readonly lastTurn: TurnOutcome | null;
}

interface EndRow {
  id: string;
  lastSeq: number;
  pending: number;
}

/** Enough for every session of a large data directory; past it, the end computed longest ago is dropped (read from the journal again when next shown). */
const KEPT_SESSIONS = 50_000;
/** A last turn's reason is the agent's error text, of any length: a longer one is read again each time, not kept. */
const KEPT_REASON_CHARACTERS = 1_000;

/**
 * The ends of many sessions' journals in one query, for a page of a list: the preview and last turn of each are
 * kept in memory against its journal's newest seq, and read from the journal (`lastWords`, `lastOutcome`) again only
 * when it grew. A journal only grows (its rows never change, a seq is never given again), so a kept end is exactly
 * what reading the journal gives; `createdAt` tells a session apart from an earlier one of the same id, deleted.
 */
export class JournalEnds {
  readonly #events: EventJournal;
  readonly #read;
  readonly #kept = new Map<string, Kept>();

  constructor(db: SqliteDatabase, events: EventJournal) {
    this.#events = events;
    // Each session's newest seq and pending questions: two index seeks a session, one statement a page.
    this.#read = db.prepare<[string], EndRow>(
      `SELECT ids.value AS id,
         (SELECT coalesce(max(seq), 0) FROM events WHERE session_id = ids.value) AS lastSeq,
         (SELECT count(*) FROM questions WHERE session_id = ids.value AND state = 'pending') AS pending
       FROM json_each(?) AS ids`,
    );
  }

  /** The end of each session's journal, by id. */
  of(sessions: readonly { readonly id: string; readonly createdAt: number }[]): Map<string, JournalEnd> {
    const ends = new Map<string, JournalEnd>();
    if (sessions.length === 0) return ends;
    const createdAt = new Map(sessions.map((session) => [session.id, session.createdAt] as const));
    for (const row of this.#read.all(JSON.stringify([...createdAt.keys()]))) {
      const kept = this.#current(row.id, row.lastSeq, createdAt.get(row.id)!);
      ends.set(row.id, { preview: kept.preview, lastTurn: kept.lastTurn, pendingQuestions: row.pending });
    }
    return ends;
  }

  #current(id: string, lastSeq: number, createdAt: number): Kept {
    const kept = this.#kept.get(id);
    if (kept !== undefined && kept.lastSeq === lastSeq && kept.createdAt === createdAt) return kept;
    const fresh = { lastSeq, createdAt, preview: this.#events.lastWords(id), lastTurn: this.#events.lastOutcome(id) };
    this.#kept.delete(id);
    if ((fresh.lastTurn?.reason?.length ?? 0) > KEPT_REASON_CHARACTERS) return fresh;
    this.#kept.set(id, fresh);
    if (this.#kept.size > KEPT_SESSIONS) this.#kept.delete(this.#kept.keys().next().value!);
    return fresh;
  }
}
