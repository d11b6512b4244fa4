import type { SqliteDatabase } from "./database.js";
import { StoreInputError, StoreNotFoundError } from "./errors.js";
import { requireCount, requireOneOf, requireText, requireTimestamp } from "./input.js";
import { guardWrite } from "./write-guard.js";

/** Which side of a file's diff a comment's line number counts in: the changed file (`new`) or the base's (`old`). */
const commentSides = ["new", "old"] as const;
export type CommentSide = (typeof commentSides)[number];

/** A person's comment on one line of a session's changes, kept until sent to its agent and after. */
export interface ReviewComment {
  readonly id: string;
  readonly sessionId: string;
  /** Relative to the repository's top, as the changes name it. */
  readonly path: string;
  /** 1-based. */
  readonly line: number;
  readonly side: CommentSide;
  readonly body: string;
  readonly createdAt: number;
  /** When it went to the agent in a prompt; null until then. */
  readonly sentAt: number | null;
}

export type NewReviewComment = Omit<ReviewComment, "sentAt">;

/** A new comment's fields checked, as both backends store them. */
export function checkedComment(op: string, comment: NewReviewComment): NewReviewComment {
  const line = requireCount(op, "line", comment.line);
  if (line < 1) throw new StoreInputError(op, `line must be 1 or more, got ${line}`);
  return {
    id: requireText(op, "id", comment.id),
    sessionId: requireText(op, "sessionId", comment.sessionId),
    path: requireText(op, "path", comment.path),
    line,
    side: requireOneOf(op, "side", comment.side, commentSides),
    body: requireText(op, "body", comment.body),
    createdAt: requireTimestamp(op, "createdAt", comment.createdAt),
  };
}

const COLUMNS = "id, session_id AS sessionId, path, line, side, body, created_at AS createdAt, sent_at AS sentAt";

export class ReviewCommentStore {
  readonly #insert;
  readonly #get;
  readonly #listOf;
  readonly #edit;
  readonly #delete;
  readonly #markSent;

  constructor(db: SqliteDatabase) {
    // Selecting from sessions turns an unknown session into "no row inserted" instead of a bare FK failure.
    this.#insert = db.prepare<[string, string, number, string, string, number, string]>(
      `INSERT INTO review_comments (id, session_id, path, line, side, body, created_at)
       SELECT ?, id, ?, ?, ?, ?, ? FROM sessions WHERE id = ?`,
    );
    this.#get = db.prepare<[string], ReviewComment>(`SELECT ${COLUMNS} FROM review_comments WHERE id = ?`);
    this.#listOf = db.prepare<[string], ReviewComment>(`SELECT ${COLUMNS} FROM review_comments WHERE session_id = ? ORDER BY created_at, id`);
    // A sent comment is what the agent was told: it stays as it was.
    this.#edit = db.prepare<[string, string]>("UPDATE review_comments SET body = ? WHERE id = ? AND sent_at IS NULL");
    this.#delete = db.prepare<[string]>("DELETE FROM review_comments WHERE id = ?");
    this.#markSent = db.prepare<[number, string]>("UPDATE review_comments SET sent_at = ? WHERE id = ? AND sent_at IS NULL");
  }

  add(comment: NewReviewComment): void {
    const op = "reviewComments.add";
    const { id, sessionId, path, line, side, body, createdAt } = checkedComment(op, comment);
    const inserted = guardWrite(op, () => this.#insert.run(id, path, line, side, body, createdAt, sessionId).changes);
    if (inserted === 0) throw new StoreNotFoundError(op, "session", sessionId);
  }

  get(id: string): ReviewComment | undefined {
    return this.#get.get(id);
  }

  /** The session's comments, oldest first. */
  listOf(sessionId: string): ReviewComment[] {
    return this.#listOf.all(sessionId);
  }

  /** Replaces an unsent comment's body; false if there is no such unsent comment. */
  edit(id: string, body: string): boolean {
    const op = "reviewComments.edit";
    const text = requireText(op, "body", body);
    return guardWrite(op, () => this.#edit.run(text, requireText(op, "id", id)).changes) === 1;
  }

  delete(id: string): boolean {
    const op = "reviewComments.delete";
    return guardWrite(op, () => this.#delete.run(requireText(op, "id", id)).changes) === 1;
  }

  /** Marks the comments of `ids` that are still unsent as sent at `at`; returns how many. */
  markSent(ids: readonly string[], at: number): number {
    const op = "reviewComments.markSent";
    const sentAt = requireTimestamp(op, "at", at);
    let marked = 0;
    for (const id of ids) marked += guardWrite(op, () => this.#markSent.run(sentAt, requireText(op, "id", id)).changes);
    return marked;
  }
}
