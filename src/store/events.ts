import type { SqliteDatabase } from "./database.js";
import { StoreInputError, StoreNotFoundError } from "./errors.js";
import { decodeJson, encodeJson, requireCount, requireText, requireTimestamp, type Json } from "./input.js";
import { plainText } from "./plain-text.js";
import { guardWrite } from "./write-guard.js";

/** One durable event of a session's journal. */
export interface JournalEvent {
  sessionId: string;
  /** 1, 2, 3... per session; a gap marks events a failed write lost (disk full), never a reused number. */
  seq: number;
  /** `turn_started`, `update`, `turn_ended`, `question_asked`, `question_resolved`, `interrupted`, `agent_exited` (see docs/host.md). */
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

export interface EventRow {
  sessionId: string;
  seq: number;
  kind: string;
  payload: string;
  at: number;
}

const DEFAULT_PAGE_SIZE = 1_000;
/** How far back a preview looks, and how much of the message it keeps. */
const PREVIEW_EVENTS = 200;
const PREVIEW_CHARACTERS = 160;

/** The end of a conversation, for a list of sessions. */
export interface MessagePreview {
  readonly role: "user" | "agent";
  /** The last words as a reader sees them (Markdown's marks left out), at most 160 characters (`…` first when cut), on one line. */
  readonly text: string;
  readonly at: number;
}

/**
 * How the session's last turn ended, or that its agent process died after it: the newest of its `turn_started`,
 * `turn_ended` and `agent_exited` events. `completed` is a normal end (any stop reason but `cancelled`), `cancelled`
 * a turn cancelled or interrupted, `failed` a turn that ended in an error (the host stopping during it too),
 * `exited` the agent process exiting unexpectedly. Null before any turn, and while one runs.
 */
export interface TurnOutcome {
  readonly outcome: "completed" | "cancelled" | "failed" | "exited";
  /** The error or the exit, in the journal's words; null for `completed` and `cancelled`. */
  readonly reason: string | null;
  readonly at: number;
}

interface OutcomeRow {
  kind: string;
  stopReason: string | null;
  error: string | null;
  exit: string | null;
  at: number;
}

interface PreviewRow {
  kind: string;
  updateKind: string | null;
  text: string | null;
  payload: string | null;
  at: number;
}

/** An event whose seq the writer already assigned (it keeps the next seq of each session it writes). */
export interface SequencedEvent {
  readonly sessionId: string;
  readonly seq: number;
  readonly kind: string;
  readonly payload: unknown;
  readonly at: number;
}

export class EventJournal {
  readonly #db;
  readonly #append;
  readonly #insert;
  readonly #read;
  readonly #lastSeq;
  readonly #tail;
  readonly #inTurn;
  readonly #lastOutcome;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#insert = db.prepare<[string, number, string, string, number]>(
      "INSERT INTO events (session_id, seq, kind, payload, at) VALUES (?, ?, ?, ?, ?)",
    );
    // One statement claims the next seq and inserts, so it is atomic without a transaction of its own
    // (cheaper than BEGIN/COMMIT or a savepoint per event). No row from sessions: unknown session.
    this.#append = db
      .prepare<[string, string, number, string], number>(
        `INSERT INTO events (session_id, seq, kind, payload, at)
         SELECT id, (SELECT coalesce(max(seq), 0) + 1 FROM events WHERE session_id = sessions.id), ?, ?, ?
         FROM sessions WHERE id = ?
         RETURNING seq`,
      )
      .pluck();
    this.#read = db.prepare<[string, number, number], EventRow>(
      `SELECT session_id AS sessionId, seq, kind, payload, at FROM events
       WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    );
    // SQLite picks the few fields out of each event: the preview never parses a whole journal entry in JavaScript.
    // `json_valid` first: SQLite's JSON functions refuse values nested over 1,000 deep (JSON.parse does not), and one
    // such event must not make every list of sessions fail.
    this.#tail = db.prepare<[string, number], PreviewRow>(
      `SELECT kind,
         CASE WHEN json_valid(payload) THEN
           coalesce(json_extract(payload, '$.params.update.sessionUpdate'), json_extract(payload, '$.update.sessionUpdate')) END AS updateKind,
         CASE WHEN json_valid(payload) THEN
           coalesce(json_extract(payload, '$.params.update.content.text'), json_extract(payload, '$.update.content.text')) END AS text,
         CASE WHEN kind = 'turn_started' THEN payload END AS payload,
         at
       FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT ?`,
    );
    // Each session's newest turn event, read backwards along the events' key: few rows per session.
    this.#inTurn = db
      .prepare<[], string>(
        `SELECT id FROM sessions WHERE (SELECT kind FROM events WHERE session_id = sessions.id AND kind IN ('turn_started', 'turn_ended')
           ORDER BY seq DESC LIMIT 1) = 'turn_started' ORDER BY id`,
      )
      .pluck();
    this.#lastOutcome = db.prepare<[string], OutcomeRow>(
      `SELECT kind, CASE WHEN json_valid(payload) THEN json_extract(payload, '$.stopReason') END AS stopReason,
         CASE WHEN json_valid(payload) THEN json_extract(payload, '$.error') END AS error,
         CASE WHEN json_valid(payload) THEN json_extract(payload, '$.exit') END AS exit, at
       FROM events WHERE session_id = ? AND kind IN ('turn_started', 'turn_ended', 'agent_exited') ORDER BY seq DESC LIMIT 1`,
    );
    this.#lastSeq = db
      .prepare<[string], number>("SELECT (SELECT coalesce(max(seq), 0) FROM events WHERE session_id = sessions.id) FROM sessions WHERE id = ?")
      .pluck();
  }

  /**
   * Appends one event and returns its seq. Does not touch the session's `updatedAt`: that is the caller's
   * decision. Group several appends atomically with `Store.transaction`.
   */
  append(sessionId: string, kind: string, payload: unknown, at: number): number {
    const op = "events.append";
    const id = requireText(op, "sessionId", sessionId);
    const text = encodeJson(op, "payload", payload);
    const args = [requireText(op, "kind", kind), text, requireTimestamp(op, "at", at), id] as const;
    const seq = guardWrite(op, () => this.#append.get(...args));
    if (seq === undefined) throw new StoreNotFoundError(op, "session", id);
    return seq;
  }

  /**
   * Appends events whose seqs the caller assigned, all or none, in one transaction. A seq that is
   * taken or a session that does not exist fails the whole batch (primary and foreign keys).
   */
  appendSequenced(events: readonly SequencedEvent[]): void {
    const op = "events.appendSequenced";
    const rows = events.map(
      (event) =>
        [
          requireText(op, "sessionId", event.sessionId),
          requireCount(op, "seq", event.seq),
          requireText(op, "kind", event.kind),
          encodeJson(op, "payload", event.payload),
          requireTimestamp(op, "at", event.at),
        ] as const,
    );
    guardWrite(op, () =>
      this.#db
        .transaction(() => {
          for (const row of rows) this.#insert.run(...row);
        })
        .immediate(),
    );
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

  /**
   * The last words of the session's conversation: the tail of its last agent message (the run of
   * agent text chunks nearest the journal's end, looking back at most 200 events), else the prompt
   * of its last turn when the agent said nothing after it. Null for a session with neither.
   */
  lastWords(sessionId: string): MessagePreview | null {
    const pieces: string[] = [];
    let length = 0;
    let at = 0;
    for (const row of this.#tail.iterate(sessionId, PREVIEW_EVENTS)) {
      if (row.kind === "update" && row.updateKind === "agent_message_chunk" && typeof row.text === "string") {
        if (pieces.length === 0) at = row.at;
        pieces.push(row.text);
        length += row.text.length;
        if (length >= PREVIEW_CHARACTERS * 2) break;
        continue;
      }
      // Anything else before the last message's chunks (a tool call, the turn's end) is passed; anything between two messages ends it.
      if (pieces.length > 0) break;
      if (row.kind !== "turn_started") continue;
      const prompt = promptText(row.payload);
      return prompt === "" ? null : { role: "user", text: lastCharacters(prompt), at: row.at };
    }
    const text = pieces.reverse().join("");
    return text.trim() === "" ? null : { role: "agent", text: lastCharacters(text), at };
  }

  /** How the session's last turn ended (see `TurnOutcome`); null before any turn and inside one. */
  lastOutcome(sessionId: string): TurnOutcome | null {
    const row = this.#lastOutcome.get(sessionId);
    if (row === undefined || row.kind === "turn_started") return null;
    if (row.kind === "agent_exited") return { outcome: "exited", reason: row.exit === null ? null : String(row.exit), at: row.at };
    if (row.error !== null) return { outcome: "failed", reason: String(row.error), at: row.at };
    if (row.stopReason === "cancelled") return { outcome: "cancelled", reason: null, at: row.at };
    return { outcome: "completed", reason: null, at: row.at };
  }

  /** The sessions whose journal ends inside a turn: a `turn_started` with no `turn_ended` after it. */
  sessionsInTurn(): string[] {
    return this.#inTurn.all();
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

function promptText(payload: string | null): string {
  const prompt = payload === null ? null : (decodeJson(payload) as { prompt?: Array<{ type?: unknown; text?: unknown }> } | null);
  return (prompt?.prompt ?? []).flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : [])).join(" ");
}

function lastCharacters(text: string): string {
  const line = plainText(text).replace(/\s+/gu, " ").trim();
  const characters = [...line];
  return characters.length <= PREVIEW_CHARACTERS
    ? line
    : `…${characters
        .slice(-(PREVIEW_CHARACTERS - 1))
        .join("")
        .trimStart()}`;
}

export function toEvent(row: EventRow): JournalEvent {
  const payload = decodeJson(row.payload);
  return { ...row, payload: row.kind === "update" ? updatePayload(payload) : payload };
}

/**
 * An update is stored as `{ update, _meta? }` (an agent's line sliced to it by the journal: `update-row.ts`). Rows written
 * before that keep the agent's whole JSON-RPC line; they are read as they are (no migration rewrites them), as every
 * update reads.
 */
function updatePayload(payload: Json): Json {
  // A whole line has `params`, an update row never has (an agent may leave out `jsonrpc`).
  if (typeof payload !== "object" || payload === null || Array.isArray(payload) || !("params" in payload) || "update" in payload) return payload;
  const params = payload.params as { update?: Json; _meta?: Json } | undefined;
  return params?._meta ? { update: params.update ?? null, _meta: params._meta } : { update: params?.update ?? null };
}
