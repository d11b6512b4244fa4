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
import { callOp } from "../store/write-batch.js";
import type { SessionBus } from "./session-bus.js";
import type { QuestionView } from "./views.js";
import { CodedError } from "../protocol/coded-error.js";

export type QuestionErrorCode = "not_found" | "already_resolved" | "invalid_answer";

export class QuestionError extends CodedError<QuestionErrorCode> {
  override readonly name = "QuestionError";
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

export function questionView(question: Question): QuestionView {
  return {
    id: question.id,
    sessionId: question.sessionId,
    kind: question.kind,
    request: question.request,
    askedAt: question.askedAt,
    state: question.state,
  };
}

/** A question an agent of this host is waiting on. */
interface OpenQuestion {
  readonly id: string;
  readonly sessionId: string;
  readonly kind: Question["kind"];
  readonly request: Json;
  /** Decided here, at once (this host is the journal's only writer), and stored through its writer. */
  resolution?: "answered" | "cancelled";
}

/**
 * Permissions and forms an agent asks become persisted questions. The first answer wins,
 * decided here as it comes (the host is the journal's only writer) and stored with its
 * `question_resolved` event before anyone hears of it; the in-memory registry returns it to the
 * very request that is waiting, however late.
 */
export class QuestionDesk {
  /** Questions asked by this host's agents and not resolved (stored) yet, by id. */
  private readonly open = new Map<string, OpenQuestion>();

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
    this.open.set(id, { id, sessionId, kind: question.kind, request });
    const unstored = (why: string) => {
      this.open.delete(id);
      located.questions.cancel(id, `the question could not be stored (${why})`);
    };
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
        refused: unstored,
      },
    );
    if (!queued) unstored("its session is unknown");
    // The agent withdrew the request ($/cancel_request) or its connection closed.
    const withdraw = () => this.cancel(id, "withdrawn by the agent");
    signal.addEventListener("abort", withdraw, { once: true });
    try {
      return await waiting;
    } finally {
      signal.removeEventListener("abort", withdraw);
    }
  }

  /**
   * Answers a pending question; the first answer wins. Settles once the answer is stored (then it
   * reaches the agent), at most `writeTimeout` later. Throws {@link QuestionError}.
   */
  async answer(questionId: string, answer: QuestionAnswer): Promise<QuestionView> {
    const question = this.open.get(questionId);
    if (!question) throw this.notOpen(questionId);
    if (question.resolution) throw new QuestionError("already_resolved", `question "${questionId}" was already ${question.resolution}`);
    validateAnswer(question, answer);
    const stored = this.resolve(question, "answered", answer, { answer }, () => {
      this.deps.peekLocation(question.sessionId)?.questions.answer(questionId, answer);
      this.deps.record({ kind: "question_answered", sessionId: question.sessionId, questionId });
    });
    await this.deps.journal.within(
      stored,
      `the answer to question "${questionId}"`,
      "it stays queued and reaches the agent once the store writes again",
    );
    return questionView(this.deps.store.questions.get(questionId)!);
  }

  /** Cancels a pending question with a reason; false if it was no longer pending. The agent hears of it at once, clients once it is stored. */
  cancel(questionId: string, reason: string): boolean {
    const question = this.open.get(questionId);
    if (!question || question.resolution) return false;
    this.deps.peekLocation(question.sessionId)?.questions.cancel(questionId, reason);
    const stored = this.resolve(question, "cancelled", reason, { reason }, () =>
      this.deps.record({ kind: "question_cancelled", sessionId: question.sessionId, questionId, reason }),
    );
    // A refusal is logged by the writer; nothing else waits on it.
    stored.catch(() => undefined);
    return true;
  }

  cancelForSession(sessionId: string, reason: string): number {
    let cancelled = 0;
    for (const question of [...this.open.values()]) if (question.sessionId === sessionId && this.cancel(question.id, reason)) cancelled++;
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
   * Resolves an open question and journals `question_resolved` in one transaction; `then` runs
   * once both are stored, before anyone hears of it. Settles then; fails if it was refused.
   */
  private resolve(
    question: OpenQuestion,
    state: "answered" | "cancelled",
    answerOrReason: unknown,
    detail: Record<string, unknown>,
    then: () => void,
  ): Promise<void> {
    const { journal, bus, clock } = this.deps;
    const { id, sessionId } = question;
    question.resolution = state;
    return new Promise((resolve, reject) => {
      const refused = (why: string) => {
        // An answer can be given again; a cancellation already reached the agent.
        if (state === "answered") question.resolution = undefined;
        else this.open.delete(id);
        reject(new Error(`question "${id}": the ${state === "answered" ? "answer" : "cancellation"} could not be stored (${why})`));
      };
      const key = this.deps.keyOf(sessionId);
      const queued =
        key !== undefined &&
        journal.append(
          sessionId,
          key,
          "question_resolved",
          { questionId: id, state, ...detail },
          {
            with: [callOp("questions.resolve", [id, state, answerOrReason, clock.now()])],
            then: () => {
              this.open.delete(id);
              then();
              bus.publish(sessionId, { type: "question_resolved", questionId: id, state });
              resolve();
            },
            refused,
          },
        );
      if (!queued) refused("its session is unknown");
    });
  }

  /** Why a question no agent here waits on cannot be answered. */
  private notOpen(questionId: string): QuestionError {
    const stored = this.deps.store.questions.get(questionId);
    if (!stored) return new QuestionError("not_found", `no question "${questionId}"`);
    if (stored.state !== "pending") return alreadyResolved(stored);
    return new QuestionError("already_resolved", `question "${questionId}" has no one waiting for its answer: the agent process that asked is gone`);
  }
}

function alreadyResolved(question: Question): QuestionError {
  return new QuestionError("already_resolved", `question "${question.id}" was already ${question.state}`);
}

function validateAnswer(question: Pick<Question, "id" | "kind" | "request">, answer: QuestionAnswer): void {
  const request = question.request as Record<string, unknown>;
  if (question.kind === "permission") {
    const options = (request.options as Array<{ optionId: string }> | undefined) ?? [];
    const known = options.map((option) => option.optionId).join(", ");
    if (!("optionId" in answer) || typeof answer.optionId !== "string") {
      throw new QuestionError(
        "invalid_answer",
        `question "${question.id}" is a permission: answer with one of its options (${known}) as { "optionId": "..." }`,
      );
    }
    if (!options.some((option) => option.optionId === answer.optionId)) {
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
