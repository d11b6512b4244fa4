import { deferred, type Deferred } from "../lifecycle/deferred.js";

/** How a waiting question ended: the first answer, or a cancellation with its reason. */
export type QuestionOutcome<A> = { readonly outcome: "answered"; readonly answer: A } | { readonly outcome: "cancelled"; readonly reason: string };

interface Waiting<Q, A> {
  readonly id: string;
  readonly sessionId: string;
  readonly question: Q;
  readonly askedAt: number;
  readonly resolution: Deferred<QuestionOutcome<A>>;
}

export interface PendingQuestion<Q> {
  readonly id: string;
  readonly sessionId: string;
  readonly question: Q;
  readonly askedAt: number;
}

/**
 * The questions a location's sessions are waiting on, in memory. The request that asked
 * holds the promise; the first answer (or cancellation) settles it, hours later if need be.
 */
export class PendingQuestions<Q, A> {
  private readonly waiting = new Map<string, Waiting<Q, A>>();

  /** Registers a question and returns the promise its asker waits on. */
  ask(id: string, sessionId: string, question: Q, askedAt: number): Promise<QuestionOutcome<A>> {
    if (this.waiting.has(id)) throw new Error(`question ${id} is already pending`);
    const resolution = deferred<QuestionOutcome<A>>();
    this.waiting.set(id, { id, sessionId, question, askedAt, resolution });
    return resolution.promise;
  }

  /** The first answer wins (the journal decides which is first); false if nothing waits on `id` here. */
  answer(id: string, answer: A): boolean {
    const waiting = this.waiting.get(id);
    if (!waiting) return false;
    this.waiting.delete(id);
    waiting.resolution.resolve({ outcome: "answered", answer });
    return true;
  }

  cancel(id: string, reason: string): boolean {
    const waiting = this.waiting.get(id);
    if (!waiting) return false;
    this.waiting.delete(id);
    waiting.resolution.resolve({ outcome: "cancelled", reason });
    return true;
  }

  /** Cancels every waiting question (the location is going away); returns their ids. */
  cancelAll(reason: string): string[] {
    const ids = [...this.waiting.keys()];
    for (const id of ids) this.cancel(id, reason);
    return ids;
  }

  list(): PendingQuestion<Q>[] {
    return [...this.waiting.values()].map(({ id, sessionId, question, askedAt }) => ({ id, sessionId, question, askedAt }));
  }
}
