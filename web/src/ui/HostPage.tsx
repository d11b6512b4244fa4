import type { LocationView, QuestionView, SessionView, StampedRecord } from "../api/types.js";
import { shortId } from "../util/format.js";
import type { AnswerQuestion } from "./answering.js";
import { Ago, Countdown, Elapsed } from "./Countdown.js";
import { FeedPanel } from "./FeedPanel.js";
import { LocationsPanel } from "./LocationsPanel.js";
import { words } from "./plain-words.js";
import { QuestionsPanel } from "./QuestionsPanel.js";
import { recordSessionId } from "./record-text.js";
import { sessionHref } from "./route.js";
import { SessionStateBadge } from "./StateBadge.js";

/**
 * `#/host`: what the host runs, for whoever looks after it: each session's agent process (pid, clients, when it
 * stops), the questions waiting, the locations with their countdowns, services and terminals, and the lifecycle records.
 */
export function HostPage({
  sessions,
  locations,
  questions,
  records,
  onAnswer,
}: {
  sessions: readonly SessionView[];
  locations: readonly LocationView[];
  questions: readonly QuestionView[];
  records: readonly StampedRecord[];
  onAnswer: AnswerQuestion;
}) {
  return (
    <div class="host-page">
      <div class="column">
        <ProcessesPanel sessions={sessions} records={records} />
        <QuestionsPanel questions={questions} sessions={sessions} onAnswer={onAnswer} />
      </div>
      <div class="column">
        <LocationsPanel locations={locations} records={records} />
        <FeedPanel records={records} sessions={sessions} />
      </div>
    </div>
  );
}

/** Each session's agent process, one row each: where it is, its pid, its clients, its turn, when it stops, its last record. */
function ProcessesPanel({ sessions, records }: { sessions: readonly SessionView[]; records: readonly StampedRecord[] }) {
  const lastRecord = new Map<string, StampedRecord>();
  for (const stamped of records) {
    const sessionId = recordSessionId(stamped.record);
    if (sessionId !== null) lastRecord.set(sessionId, stamped);
  }
  return (
    <section class="panel" aria-labelledby="processes-heading">
      <h2 id="processes-heading">
        Agent processes <span class="count">{sessions.length}</span>
      </h2>
      {sessions.length === 0 ? (
        <p class="empty">No sessions yet.</p>
      ) : (
        <div class="table-frame">
          <table class="processes">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Agent process</th>
                <th scope="col">PID</th>
                <th scope="col" class="term" title={words.holders.term}>
                  {words.holders.plain}
                </th>
                <th scope="col">Turn</th>
                <th scope="col">Last event</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((session) => (
                <ProcessRow key={session.id} session={session} last={lastRecord.get(session.id)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function ProcessRow({ session, last }: { session: SessionView; last: StampedRecord | undefined }) {
  return (
    <tr data-session-id={session.id}>
      <th scope="row">
        <a href={sessionHref(session.id)}>{session.title ?? `Untitled session ${shortId(session.id)}`}</a>
        <span class="muted process-agent">
          {session.agent}
          {session.host === null ? null : ` · ${session.host}${session.hostOnline ? "" : " (host offline)"}`}
        </span>
      </th>
      <td>
        <SessionStateBadge state={session.state} />
        {session.releaseAt !== null && session.holders === 0 ? (
          <span class="release term" title={words.release.term}>
            {" "}
            stops <Countdown at={session.releaseAt} expired="any moment" />
          </span>
        ) : null}
      </td>
      <td class="mono pid">{session.pid ?? "—"}</td>
      <td class="holders">{session.holders}</td>
      <td>
        {session.turnActive && session.turnStartedAt !== null ? (
          <span class="running">
            running for <Elapsed since={session.turnStartedAt} />
          </span>
        ) : (
          "idle"
        )}
      </td>
      <td>
        {last ? (
          <>
            {last.message} · <Ago at={last.at} />
          </>
        ) : (
          <>
            updated <Ago at={session.updatedAt} />
          </>
        )}
      </td>
    </tr>
  );
}
