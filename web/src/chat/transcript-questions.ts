/** A question the agent asked, as the transcript keeps it. */
export interface TranscriptQuestion {
  readonly id: string;
  readonly kind: "permission" | "elicitation";
  /** What is asked: the tool call's title, or the form's message. */
  readonly title: string;
  /** The agent's request as stored, for answering it. */
  readonly request: unknown;
  readonly options: ReadonlyArray<{ readonly optionId: string; readonly name: string; readonly kind: string }>;
}

/** How a question was settled, in words for the transcript. */
export interface QuestionResolution {
  readonly state: "answered" | "cancelled";
  /** "allowed", "rejected", "answered", "declined", "cancelled" or "withdrawn". */
  readonly verb: string;
  readonly detail: string | null;
}

/** The question of a `question_asked` event's payload, or null if it is not one. */
export function questionOf(payload: Record<string, unknown>): TranscriptQuestion | null {
  const { questionId, kind, request } = payload;
  if (typeof questionId !== "string" || (kind !== "permission" && kind !== "elicitation")) return null;
  const body = (request ?? {}) as { toolCall?: { title?: unknown }; message?: unknown; options?: unknown };
  const title = kind === "permission" ? body.toolCall?.title : body.message;
  const options = Array.isArray(body.options)
    ? body.options.flatMap((option: { optionId?: unknown; name?: unknown; kind?: unknown }) =>
        typeof option?.optionId === "string"
          ? [{ optionId: option.optionId, name: typeof option.name === "string" ? option.name : option.optionId, kind: String(option.kind ?? "") }]
          : [],
      )
    : [];
  return { id: questionId, kind, title: typeof title === "string" && title !== "" ? title : `a ${kind} question`, request, options };
}

/** The resolution of a `question_resolved` event's payload. */
export function resolutionOf(question: TranscriptQuestion, payload: Record<string, unknown>): QuestionResolution {
  if (payload.state !== "answered") {
    const reason = typeof payload.reason === "string" ? payload.reason : null;
    return { state: "cancelled", verb: "withdrawn", detail: reason };
  }
  const answer = (payload.answer ?? {}) as { optionId?: unknown; action?: unknown; content?: unknown };
  if (typeof answer.optionId === "string") {
    const option = question.options.find((o) => o.optionId === answer.optionId);
    const verb = option?.kind.startsWith("reject") ? "rejected" : "allowed";
    return { state: "answered", verb, detail: option?.name ?? answer.optionId };
  }
  if (answer.action === "accept") {
    const content = typeof answer.content === "object" && answer.content !== null ? (answer.content as Record<string, unknown>) : {};
    const fields = Object.entries(content).map(([field, value]) => `${field}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
    return { state: "answered", verb: "answered", detail: fields.join(", ") || null };
  }
  return { state: "answered", verb: answer.action === "decline" ? "declined" : "cancelled", detail: null };
}
