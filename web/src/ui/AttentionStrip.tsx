import type { QuestionView, SessionView } from "../api/types.js";
import { questionSummary, sessionTitle } from "../notify/question-words.js";
import { openAtQuestion } from "./question-focus.js";

/**
 * A question waiting in another session, in its words, under the top bar of every view but those with the
 * Questions panel (the list with no conversation open, the Host page): one tap opens its session's chat at the question.
 */
export function AttentionStrip({
  questions,
  sessions,
  openSessionId,
}: {
  questions: readonly QuestionView[];
  sessions: readonly SessionView[];
  /** The open chat's session: its questions are in its conversation already. */
  openSessionId: string | null;
}) {
  const elsewhere = questions.filter((question) => question.sessionId !== openSessionId);
  const first = elsewhere[0];
  if (!first) return null;
  const more = elsewhere.length - 1;
  return (
    <aside class="attention-strip" aria-label="Waiting for you">
      <button type="button" onClick={() => openAtQuestion(first.sessionId, first.id)}>
        <span class="attention-what">{first.kind === "permission" ? "Permission" : "Question"}</span>
        <span class="attention-words">{questionSummary(first)}</span>
        <span class="attention-where">
          {sessionTitle(first.sessionId, sessions)}
          {more > 0 ? ` · ${more} more waiting` : ""}
        </span>
      </button>
    </aside>
  );
}
