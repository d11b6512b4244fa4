import type { QuestionView, SessionView } from "../api/types.js";
import { locationName, shortId } from "../util/format.js";
import { type AnswerQuestion, useAnswering } from "./answering.js";
import { Ago } from "./Countdown.js";
import { QuestionBody } from "./QuestionBody.js";
import { sessionHref } from "./route.js";

/** Questions waiting for a person, answerable here over REST (shown where no conversation is open: the list's pane, the Host page). */
export function QuestionsPanel({
  questions,
  sessions,
  onAnswer,
}: {
  questions: readonly QuestionView[];
  sessions: readonly SessionView[];
  onAnswer: AnswerQuestion;
}) {
  return (
    <section class="panel" aria-labelledby="questions-heading">
      <h2 id="questions-heading">
        Questions <span class="count">{questions.length}</span>
      </h2>
      <div aria-live="polite" aria-relevant="additions">
        {questions.length === 0 ? (
          <p class="empty">Nothing is waiting for you.</p>
        ) : (
          <ul class="cards">
            {questions.map((question) => (
              <QuestionCard key={question.id} question={question} session={sessions.find((s) => s.id === question.sessionId)} onAnswer={onAnswer} />
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}

function QuestionCard({ question, session, onAnswer }: { question: QuestionView; session: SessionView | undefined; onAnswer: AnswerQuestion }) {
  const { busy, failure, answer } = useAnswering(question.id, onAnswer);
  const headingId = `question-${question.id}`;
  return (
    <li class="card question" aria-labelledby={headingId} data-question-id={question.id} tabIndex={-1}>
      <div class="card-head">
        <h3 id={headingId}>{question.kind === "permission" ? "Permission" : "Form"}</h3>
        <span class="muted">
          asked <Ago at={question.askedAt} />
        </span>
      </div>
      <p class="meta">
        <a href={sessionHref(question.sessionId)}>{session?.title ?? `session ${shortId(question.sessionId)}`}</a>
        {session ? (
          <>
            {" · "}
            {session.agent} · <span class="path">{locationName(session.cwd, session.workspace)}</span>
          </>
        ) : null}
      </p>
      <QuestionBody questionId={question.id} kind={question.kind} request={question.request} idPrefix={headingId} busy={busy} onAnswer={answer} />
      {failure === null ? null : (
        <p class="error" role="alert">
          {failure}
        </p>
      )}
    </li>
  );
}
