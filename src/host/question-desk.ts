import { randomUUID } from "node:crypto";
import type { Clock } from "../lifecycle/clock.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import type { QuestionOutcome } from "../location/pending-questions.js";
import type { LocationServices } from "../location/location-services.js";
import type { QuestionAnswer, QuestionRequest } from "../location/question-types.js";
import type { Json } from "../store/input.js";
import type { Question } from "../store/questions.js";
import type { Store } from "../store/store.js";
import type { HostRecord } from "./host-records.js";
import type { Journal } from "./journal.js";
import type { SessionBus } from "./session-bus.js";
import type { QuestionView } from "./views.js";

export type QuestionErrorCode = "not_found" | "already_resolved" | "invalid_answer";

export class QuestionError extends Error {
  override readonly name = "QuestionError";
  constructor(
    readonly code: QuestionErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface QuestionDeskDeps {
  readonly store: Store;
  readonly journal: Journal;
  readonly bus: SessionBus;
  readonly clock: Clock;
  readonly record: (record: HostRecord) => void;
  /** The booted services of a session's location, if any. Never boots. */
  readonly peekLocation: (sessionId: string) => LocationServices | undefined;
  readonly keyOf: (sessionId: string) => LocationKey | undefined;
}

function questionView(question: Question): QuestionView {
  return {
    id: question.id,
    sessionId: question.sessionId,
    kind: question.kind,
    request: question.request,
    askedAt: question.askedAt,
    state: question.state,
  };
}

/**
 * Permissions and forms an agent asks become persisted questions. The store decides
 * which answer is first; the in-memory registry returns it to the very request that
 * is waiting, however late.
 */
export class QuestionDesk {
  constructor(private readonly deps: QuestionDeskDeps) {}

  async ask(
    sessionId: string,
    key: LocationKey,
    located: LocationServices,
    question: QuestionRequest,
    signal: AbortSignal,
  ): Promise<QuestionOutcome<QuestionAnswer>> {
    const { journal, bus, clock, record } = this.deps;
    const id = randomUUID();
    const askedAt = clock.now();
    const requestText = JSON.stringify(question.request);
    const request = JSON.parse(requestText) as Json;
    const waiting = located.questions.ask(id, sessionId, question, askedAt);
    // The question's row and its `question_asked` event are one transaction; clients hear of it once both are stored.
    const queued = journal.append(
      sessionId,
      key,
      "question_asked",
      { questionId: id, kind: question.kind, request },
      {
        with: [["q", id, sessionId, question.kind, requestText, askedAt]],
        then: () => {
          bus.publish(sessionId, { type: "question_asked", question: { id, sessionId, kind: question.kind, request, askedAt, state: "pending" } });
          record({ kind: "question_asked", sessionId, questionId: id, questionKind: question.kind });
        },
      },
    );
    if (!queued) located.questions.cancel(id, "the question could not be stored");
    // The agent withdrew the request ($/cancel_request) or its connection closed.
    const withdraw = () => this.cancel(id, "withdrawn by the agent");
    signal.addEventListener("abort", withdraw, { once: true });
    try {
      return await waiting;
    } finally {
      signal.removeEventListener("abort", withdraw);
    }
  }

  /** Answers a pending question; the first answer wins. Throws {@link QuestionError}. */
  answer(questionId: string, answer: QuestionAnswer): QuestionView {
    const { store } = this.deps;
    const question = store.questions.get(questionId);
    if (!question) throw new QuestionError("not_found", `no question "${questionId}"`);
    if (question.state !== "pending") throw alreadyResolved(question);
    validateAnswer(question, answer);
    if (!this.resolve(question, "answered", answer, { answer })) throw alreadyResolved(store.questions.get(questionId)!);
    this.deps.peekLocation(question.sessionId)?.questions.answer(questionId, answer);
    this.deps.record({ kind: "question_answered", sessionId: question.sessionId, questionId });
    return questionView(store.questions.get(questionId)!);
  }

  /** Cancels a pending question with a reason; false if it was no longer pending. */
  cancel(questionId: string, reason: string): boolean {
    const question = this.deps.store.questions.get(questionId);
    if (!question || question.state !== "pending" || !this.resolve(question, "cancelled", reason, { reason })) return false;
    this.deps.peekLocation(question.sessionId)?.questions.cancel(questionId, reason);
    this.deps.record({ kind: "question_cancelled", sessionId: question.sessionId, questionId, reason });
    return true;
  }

  cancelForSession(sessionId: string, reason: string): number {
    let cancelled = 0;
    for (const question of this.deps.store.questions.listPending(sessionId)) if (this.cancel(question.id, reason)) cancelled++;
    return cancelled;
  }

  /** Pending questions, from the journal: reading never boots a location. */
  pending(sessionId?: string): QuestionView[] {
    return this.deps.store.questions.listPending(sessionId).map(questionView);
  }

  get(questionId: string): QuestionView | undefined {
    const question = this.deps.store.questions.get(questionId);
    return question && questionView(question);
  }

  /**
   * Resolves a pending question and journals `question_resolved` in one transaction, stored
   * before anyone hears of it; false if another resolution was first.
   */
  private resolve(question: Question, state: "answered" | "cancelled", answerOrReason: unknown, detail: Record<string, unknown>): boolean {
    const { store, journal, clock } = this.deps;
    const won = journal.exclusive(() =>
      store.transaction(() => {
        const at = clock.now();
        const first =
          state === "answered"
            ? store.questions.resolve(question.id, "answered", answerOrReason, at)
            : store.questions.resolve(question.id, "cancelled", answerOrReason as string, at);
        if (first) journal.appendNow(question.sessionId, "question_resolved", { questionId: question.id, state, ...detail });
        return first;
      }),
    );
    if (won) this.deps.bus.publish(question.sessionId, { type: "question_resolved", questionId: question.id, state });
    return won;
  }
}

function alreadyResolved(question: Question): QuestionError {
  return new QuestionError("already_resolved", `question "${question.id}" was already ${question.state}`);
}

function validateAnswer(question: Question, answer: QuestionAnswer): void {
  const request = question.request as Record<string, unknown>;
  if (question.kind === "permission") {
    if (!("optionId" in answer) || typeof answer.optionId !== "string") {
      throw new QuestionError("invalid_answer", `question "${question.id}" is a permission: answer with { "optionId": "..." }`);
    }
    const options = (request.options as Array<{ optionId: string }> | undefined) ?? [];
    if (!options.some((option) => option.optionId === answer.optionId)) {
      const known = options.map((option) => option.optionId).join(", ");
      throw new QuestionError("invalid_answer", `question "${question.id}" has no option "${answer.optionId}" (options: ${known})`);
    }
    return;
  }
  if (!("action" in answer) || !["accept", "decline", "cancel"].includes(answer.action)) {
    throw new QuestionError(
      "invalid_answer",
      `question "${question.id}" is a form: answer with { "action": "accept" | "decline" | "cancel", "content": {...} }`,
    );
  }
  if (answer.action !== "accept") return;
  if (typeof answer.content !== "object" || answer.content === null || Array.isArray(answer.content)) {
    throw new QuestionError("invalid_answer", `question "${question.id}": an accepted form needs "content" as an object`);
  }
  const schema = request.requestedSchema as { required?: string[] } | undefined;
  const missing = (schema?.required ?? []).filter((field) => !(field in answer.content));
  if (missing.length > 0) {
    throw new QuestionError(
      "invalid_answer",
      `question "${question.id}": missing required field${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`,
    );
  }
}
