import { personWords } from "../util/error-words.js";
import type { MessageEntry, TranscriptRow } from "../chat/transcript.js";
import type { QuestionResolution, TranscriptQuestion } from "../chat/transcript-questions.js";
import { type AnswerQuestion, useAnswering } from "./answering.js";
import { QuestionBody } from "./QuestionBody.js";
import { blockHtml, tailHtml } from "./rendered-markdown.js";
import { ToolCallCard } from "./ToolCallCard.js";

/** One row of the transcript: a message's block (or its growing tail), a tool call, a plan, a question, a turn's end. */
export function TranscriptEntryView({
  uid,
  row,
  onAnswer,
  writable,
}: {
  uid: number;
  row: TranscriptRow;
  onAnswer: AnswerQuestion;
  /** What the session's sandbox lets it write; null when it has none. */
  writable: readonly string[] | null;
}) {
  const entry = row.entry;
  switch (entry.kind) {
    case "message":
      return <MessageRow uid={uid} row={row} entry={entry} />;
    case "tool":
      return <ToolCallCard call={entry.call} outputs={entry.outputs} writable={writable} />;
    case "plan":
      return (
        <div class="plan">
          <span class="who">Plan</span>
          <ol>
            {entry.entries.map((item, i) => (
              <li key={i} class={`plan-${item.status}`}>
                <span class={`badge ${item.status === "completed" ? "ok" : item.status === "in_progress" ? "info" : "muted"}`}>
                  {item.status.replace("_", " ")}
                </span>{" "}
                {item.content}
              </li>
            ))}
          </ol>
        </div>
      );
    case "turn-end":
      return (
        <p class={entry.error ? "stop failed" : "stop"} role="status">
          {entry.error ? `Turn failed: ${personWords(entry.error)}` : `Turn ended: ${(entry.stopReason ?? "unknown").replace("_", " ")}`}
        </p>
      );
    case "question":
      return entry.resolution ? (
        <QuestionRow question={entry.question} resolution={entry.resolution} />
      ) : (
        <WaitingQuestion question={entry.question} onAnswer={onAnswer} />
      );
  }
}

const whoOf = { user: "You", agent: "Agent", thought: "Thinking" } as const;

function MessageRow({ uid, row, entry }: { uid: number; row: TranscriptRow; entry: MessageEntry }) {
  const classes = ["message", entry.notice ? "notice" : entry.role];
  if (!row.first) classes.push("cont");
  if (!row.last) classes.push("open");
  if (entry.segments.blocks.length > 0) classes.push("long");
  const key = `${uid}:${entry.id}.${row.part}`;
  const source = row.part >= 0 ? entry.segments.blocks[row.part]! : entry.segments.tail;
  // Agent text is Markdown; what the person typed and Berth's own notices are shown as written.
  const plain = entry.role === "user" || entry.notice;
  return (
    <div class={classes.join(" ")} role={entry.notice ? "note" : undefined} data-chars={row.last ? entry.length : undefined}>
      {row.first ? <span class="who">{entry.notice ? "Berth" : whoOf[entry.role]}</span> : null}
      {plain ? (
        <p class="plain">{source}</p>
      ) : (
        <div class="md" dangerouslySetInnerHTML={{ __html: row.part >= 0 ? blockHtml(key, source) : tailHtml(key, source) }} />
      )}
    </div>
  );
}

/**
 * A question waiting for the person, answered where it was asked: the only place the conversation shows
 * it (the Questions list points here). Answered over REST, so it reaches the agent whoever holds the session.
 */
function WaitingQuestion({ question, onAnswer }: { question: TranscriptQuestion; onAnswer: AnswerQuestion }) {
  const { busy, failure, answer } = useAnswering(question.id, onAnswer);
  const headingId = `ask-${question.id}`;
  return (
    <div class="question-row waiting" role="group" aria-labelledby={headingId} data-question-id={question.id} tabIndex={-1}>
      <span class="who" id={headingId}>
        {question.kind === "permission" ? "The agent asks for permission" : "The agent asks you to fill in a form"}
      </span>
      <QuestionBody questionId={question.id} kind={question.kind} request={question.request} idPrefix={headingId} busy={busy} onAnswer={answer} />
      {failure === null ? null : (
        <p class="error" role="alert">
          {failure}
        </p>
      )}
    </div>
  );
}

/** A settled question in the conversation: what was asked and how it was settled. */
function QuestionRow({ question, resolution }: { question: TranscriptQuestion; resolution: QuestionResolution }) {
  const what = question.kind === "permission" ? "Permission" : "Form";
  const whom = resolution.verb === "withdrawn" ? "Withdrawn" : `You ${resolution.verb}`;
  return (
    <div class={`question-row resolved ${resolution.verb}`} role="note">
      <span class="who">{what}</span>
      <p>
        <span class="asked">{question.title}</span>
        <span class="answer">
          {whom}
          {resolution.detail ? `: ${resolution.detail}` : ""}
        </span>
      </p>
    </div>
  );
}
