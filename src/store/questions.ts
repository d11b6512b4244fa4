import type { SqliteDatabase } from "./database.js";
import { StoreNotFoundError } from "./errors.js";
import { decodeJson, encodeJson, requireOneOf, requireText, requireTimestamp, type Json } from "./input.js";
import { guardWrite } from "./write-guard.js";

const questionKinds = ["permission", "elicitation"] as const;
type QuestionKind = (typeof questionKinds)[number];

/** The states a pending question can move to, once. */
const questionOutcomes = ["answered", "cancelled", "orphaned"] as const;
export type QuestionOutcome = (typeof questionOutcomes)[number];
type QuestionState = "pending" | QuestionOutcome;

export interface Question {
  id: string;
  sessionId: string;
  kind: QuestionKind;
  /** The options or form schema, and whatever else the agent sent. */
  request: Json;
  askedAt: number;
  state: QuestionState;
  /** Set when `answered`. */
  answer: Json | null;
  /** Set when `cancelled` or `orphaned`. */
  reason: string | null;
  resolvedAt: number | null;
}

export interface NewQuestion {
  id: string;
  sessionId: string;
  kind: QuestionKind;
  request: unknown;
  askedAt: number;
}

interface QuestionRow extends Omit<Question, "request" | "answer"> {
  request: string;
  answer: string | null;
}

const COLUMNS = `id, session_id AS sessionId, kind, request, asked_at AS askedAt, state, answer, reason,
  resolved_at AS resolvedAt`;
const OLDEST_FIRST = "ORDER BY asked_at, id";

export class QuestionStore {
  readonly #insert;
  readonly #get;
  readonly #listPending;
  readonly #listPendingOf;
  readonly #listOf;
  readonly #resolve;

  constructor(db: SqliteDatabase) {
    // Selecting from sessions turns an unknown session into "no row inserted" instead of a bare FK failure.
    this.#insert = db.prepare<[string, string, string, number, string]>(
      `INSERT INTO questions (id, session_id, kind, request, asked_at)
       SELECT ?, id, ?, ?, ? FROM sessions WHERE id = ?`,
    );
    this.#get = db.prepare<[string], QuestionRow>(`SELECT ${COLUMNS} FROM questions WHERE id = ?`);
    this.#listPending = db.prepare<[], QuestionRow>(`SELECT ${COLUMNS} FROM questions WHERE state = 'pending' ${OLDEST_FIRST}`);
    this.#listPendingOf = db.prepare<[string], QuestionRow>(
      `SELECT ${COLUMNS} FROM questions WHERE session_id = ? AND state = 'pending' ${OLDEST_FIRST}`,
    );
    this.#listOf = db.prepare<[string], QuestionRow>(`SELECT ${COLUMNS} FROM questions WHERE session_id = ? ${OLDEST_FIRST}`);
    // The `state = 'pending'` guard makes the first resolution win and every later one a no-op.
    this.#resolve = db.prepare<[QuestionOutcome, string | null, string | null, number, string]>(
      `UPDATE questions SET state = ?, answer = ?, reason = ?, resolved_at = ?
       WHERE id = ? AND state = 'pending'`,
    );
  }

  ask(question: NewQuestion): Question {
    const op = "questions.ask";
    const id = requireText(op, "id", question.id);
    const sessionId = requireText(op, "sessionId", question.sessionId);
    const kind = requireOneOf(op, "kind", question.kind, questionKinds);
    const request = encodeJson(op, "request", question.request);
    const askedAt = requireTimestamp(op, "askedAt", question.askedAt);
    const inserted = guardWrite(op, () => this.#insert.run(id, kind, request, askedAt, sessionId).changes);
    if (inserted === 0) throw new StoreNotFoundError(op, "session", sessionId);
    const pending = { state: "pending", answer: null, reason: null, resolvedAt: null } as const;
    return toQuestion({ id, sessionId, kind, request, askedAt, ...pending });
  }

  get(id: string): Question | undefined {
    const row = this.#get.get(id);
    return row && toQuestion(row);
  }

  /** Pending questions, oldest first: all of them, or one session's. */
  listPending(sessionId?: string): Question[] {
    const rows = sessionId === undefined ? this.#listPending.all() : this.#listPendingOf.all(sessionId);
    return rows.map(toQuestion);
  }

  /** Every question of the session, whatever its state, oldest first. */
  listOf(sessionId: string): Question[] {
    return this.#listOf.all(sessionId).map(toQuestion);
  }

  /**
   * Resolves a pending question. Returns true if this call won, false if the question had already been
   * resolved (the first resolution stands, unchanged).
   */
  resolve(id: string, state: "answered", answer: unknown, at: number): boolean;
  resolve(id: string, state: "cancelled" | "orphaned", reason: string, at: number): boolean;
  resolve(id: string, state: QuestionOutcome, answerOrReason: unknown, at: number): boolean {
    const op = "questions.resolve";
    const outcome = requireOneOf(op, "state", state, questionOutcomes);
    const answer = outcome === "answered" ? encodeJson(op, "answer", answerOrReason) : null;
    const reason = outcome === "answered" ? null : requireText(op, "reason", answerOrReason);
    const resolvedAt = requireTimestamp(op, "at", at);
    const won = guardWrite(op, () => this.#resolve.run(outcome, answer, reason, resolvedAt, id).changes) === 1;
    if (!won && this.#get.get(id) === undefined) throw new StoreNotFoundError(op, "question", id);
    return won;
  }
}

function toQuestion(row: QuestionRow): Question {
  return {
    ...row,
    request: decodeJson(row.request),
    answer: row.answer === null ? null : decodeJson(row.answer),
  };
}
