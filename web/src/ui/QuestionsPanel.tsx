import { useState } from "preact/hooks";
import type { QuestionAnswer, QuestionView, SessionView } from "../api/types.js";
import { Ago } from "./Countdown.js";
import { QuestionBody } from "./QuestionBody.js";
import { sessionHref } from "./route.js";
import { locationName, shortId } from "../util/format.js";

export type AnswerQuestion = (questionId: string, answer: QuestionAnswer) => Promise<void>;

/** Questions waiting for a person, answerable here over REST. */
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

type Sending = { readonly name: "idle" } | { readonly name: "sending" } | { readonly name: "failed"; readonly message: string };

function QuestionCard({ question, session, onAnswer }: { question: QuestionView; session: SessionView | undefined; onAnswer: AnswerQuestion }) {
  const [sending, setSending] = useState<Sending>({ name: "idle" });
  const answer = (value: QuestionAnswer): void => {
    setSending({ name: "sending" });
    onAnswer(question.id, value).catch((error: unknown) =>
      setSending({ name: "failed", message: error instanceof Error ? error.message : String(error) }),
    );
  };
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
      <QuestionBody kind={question.kind} request={question.request} idPrefix={headingId} busy={sending.name === "sending"} onAnswer={answer} />
      {sending.name === "failed" ? (
        <p class="error" role="alert">
          {sending.message}
        </p>
      ) : null}
    </li>
  );
}
