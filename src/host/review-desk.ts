import { randomUUID } from "node:crypto";
import type { Clock } from "../lifecycle/clock.js";
import type { ReviewComment, CommentSide } from "../store/review-comments.js";
import type { Store } from "../store/store.js";
import type { Journal } from "./journal.js";
import { CodedError } from "../protocol/coded-error.js";

export type ReviewRefusal = "comment_not_found" | "comment_sent" | "no_unsent_comments";

/** A comment that is not the session's, was already sent, or a send with nothing to send. */
export class ReviewError extends CodedError<ReviewRefusal> {
  override readonly name = "ReviewError";
}

export interface NewComment {
  readonly path: string;
  readonly line: number;
  readonly side: CommentSide;
  readonly body: string;
}

/**
 * A session's review comments: read from the host's store (a fleet host's mirror), written
 * through its one writer, so SQLite and PostgreSQL store them alike (docs/review.md).
 */
export class ReviewDesk {
  constructor(private readonly deps: { readonly store: Store; readonly journal: Journal; readonly clock: Clock }) {}

  list(sessionId: string): ReviewComment[] {
    return this.deps.store.reviewComments.listOf(sessionId);
  }

  async add(sessionId: string, comment: NewComment): Promise<ReviewComment> {
    const id = randomUUID();
    const { journal } = this.deps;
    const added = journal.call("reviewComments.add", [{ id, sessionId, ...comment, createdAt: this.deps.clock.now() }], sessionId);
    await journal.within(added, "the review comment", "it stays queued and is added once the store writes again");
    return this.require(sessionId, id);
  }

  async edit(sessionId: string, commentId: string, body: string): Promise<ReviewComment> {
    this.unsent(sessionId, commentId);
    const { journal } = this.deps;
    await journal.within(journal.call("reviewComments.edit", [commentId, body], sessionId), "the comment's new text", "it stays queued");
    return this.require(sessionId, commentId);
  }

  async delete(sessionId: string, commentId: string): Promise<void> {
    this.require(sessionId, commentId);
    const { journal } = this.deps;
    await journal.within(journal.call("reviewComments.delete", [commentId], sessionId), "the comment's deletion", "it stays queued");
  }

  /** The comments not sent yet, oldest first; refused when there is none. */
  unsentOf(sessionId: string): ReviewComment[] {
    const unsent = this.list(sessionId).filter((comment) => comment.sentAt === null);
    if (unsent.length === 0) throw new ReviewError("no_unsent_comments", `session "${sessionId}" has no unsent review comments to send`);
    return unsent;
  }

  async markSent(sessionId: string, comments: readonly ReviewComment[]): Promise<ReviewComment[]> {
    const ids = comments.map((comment) => comment.id);
    const { journal } = this.deps;
    // The prompt went already: marking them sent stays queued rather than fail the send.
    await journal.within(
      journal.call("reviewComments.markSent", [ids, this.deps.clock.now()], sessionId),
      "marking the comments sent",
      "it stays queued",
    );
    return ids.map((id) => this.require(sessionId, id));
  }

  private require(sessionId: string, commentId: string): ReviewComment {
    const comment = this.deps.store.reviewComments.get(commentId);
    if (!comment || comment.sessionId !== sessionId)
      throw new ReviewError("comment_not_found", `no review comment "${commentId}" on session "${sessionId}"`);
    return comment;
  }

  private unsent(sessionId: string, commentId: string): ReviewComment {
    const comment = this.require(sessionId, commentId);
    if (comment.sentAt !== null)
      throw new ReviewError("comment_sent", `review comment "${commentId}" was sent to the agent already; it is kept as it was sent`);
    return comment;
  }
}
