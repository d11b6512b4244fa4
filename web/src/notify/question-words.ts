import type { QuestionView, SessionView } from "../api/types.js";
import { shortId } from "../util/format.js";

/** A session as a person knows it: its title, or its short id until it has one. */
export function sessionTitle(sessionId: string, sessions: readonly SessionView[]): string {
  return sessions.find((session) => session.id === sessionId)?.title ?? `Untitled session ${shortId(sessionId)}`;
}

/** What a question asks, in the agent's words when it gave some. */
export function questionSummary(question: QuestionView): string {
  const request = (question.request ?? {}) as { toolCall?: { title?: unknown }; message?: unknown };
  const text = question.kind === "permission" ? request.toolCall?.title : request.message;
  return typeof text === "string" && text.trim() !== ""
    ? text
    : question.kind === "permission"
      ? "The agent asks for permission."
      : "The agent asks you to fill in a form.";
}
