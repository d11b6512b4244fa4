import type { QuestionView, SessionView } from "../api/types.js";
import type { AnswerQuestion } from "./answering.js";
import { QuestionsPanel } from "./QuestionsPanel.js";

/**
 * Beside the list when no conversation is open: a welcome with nothing to list yet, else the questions waiting
 * and a word on where conversations open. Nothing before the sessions are known (no welcome flashes by).
 */
export function HomePane({
  loaded,
  sessions,
  questions,
  onNewSession,
  onAnswer,
}: {
  loaded: boolean;
  sessions: readonly SessionView[];
  questions: readonly QuestionView[];
  onNewSession: () => void;
  onAnswer: AnswerQuestion;
}) {
  if (!loaded) return null;
  if (sessions.length === 0) {
    return (
      <section class="welcome" aria-labelledby="welcome-heading">
        <h2 id="welcome-heading">Start your first session</h2>
        <p>Berth runs coding agents on this machine and keeps their conversations, so you can leave and pick up again from any device.</p>
        <button type="button" class="primary" onClick={onNewSession}>
          New session
        </button>
      </section>
    );
  }
  return (
    <div class="home-pane">
      <QuestionsPanel questions={questions} sessions={sessions} onAnswer={onAnswer} />
      <p class="muted home-hint">Open a conversation from the list, or start a new one.</p>
    </div>
  );
}
