import type { SessionView, StampedRecord } from "../api/types.js";
import { locationName, shortId } from "../util/format.js";
import { Ago, Countdown, Elapsed } from "./Countdown.js";
import { EditableTitle } from "./EditableTitle.js";
import { recordSessionId } from "./record-text.js";
import { sessionHref } from "./route.js";
import { SessionFilters } from "./SessionFilters.js";
import { isFiltering, type SessionFilter } from "./session-filter.js";
import { words } from "./plain-words.js";
import { SessionStateBadge } from "./StateBadge.js";

export type RenameSession = (sessionId: string, title: string | null) => Promise<void>;

/** Every session (found by search and filters): its agent child, who holds it, what it is doing, what waits. */
export function SessionsPanel({
  sessions,
  shown,
  filter,
  onFilter,
  records,
  openSessionId,
  onDelete,
  onRename,
}: {
  sessions: readonly SessionView[];
  /** The sessions the filter lets through, in order. */
  shown: readonly SessionView[];
  filter: SessionFilter;
  onFilter: (filter: SessionFilter) => void;
  records: readonly StampedRecord[];
  openSessionId: string | null;
  onDelete: (session: SessionView) => void;
  onRename: RenameSession;
}) {
  const lastRecord = new Map<string, StampedRecord>();
  for (const stamped of records) {
    const sessionId = recordSessionId(stamped.record);
    if (sessionId !== null) lastRecord.set(sessionId, stamped);
  }
  return (
    <section class="panel" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">
        Sessions <span class="count">{sessions.length}</span>
      </h2>
      {sessions.length > 0 ? <SessionFilters sessions={sessions} shown={shown.length} filter={filter} onChange={onFilter} /> : null}
      {sessions.length === 0 ? (
        <p class="empty">No sessions yet. Start one with “New session”.</p>
      ) : shown.length === 0 && isFiltering(filter) ? (
        <p class="empty">No session matches. Clear the search or the filters to see all {sessions.length}.</p>
      ) : (
        <ul class="cards">
          {shown.map((session) => (
            <SessionCard
              key={session.id}
              session={session}
              last={lastRecord.get(session.id)}
              open={session.id === openSessionId}
              onDelete={() => onDelete(session)}
              onRename={(title) => onRename(session.id, title)}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function SessionCard({
  session,
  last,
  open,
  onDelete,
  onRename,
}: {
  session: SessionView;
  last: StampedRecord | undefined;
  open: boolean;
  onDelete: () => void;
  onRename: (title: string | null) => Promise<void>;
}) {
  const headingId = `session-${session.id}`;
  const title = session.title ?? `Untitled session ${shortId(session.id)}`;
  return (
    <li class={`card session${open ? " current" : ""}`} aria-labelledby={headingId} data-session-id={session.id}>
      <div class="card-head">
        <EditableTitle title={session.title} shown={title} level={3} headingId={headingId} onRename={onRename}>
          <a href={sessionHref(session.id)} aria-current={open ? "page" : undefined}>
            {title}
          </a>
        </EditableTitle>
        <SessionStateBadge state={session.state} />
      </div>
      {session.preview ? (
        <p class="preview" title={session.preview.text}>
          <span class="preview-role">{session.preview.role === "agent" ? `${session.agent}:` : "You:"}</span> {session.preview.text}
        </p>
      ) : null}
      <dl class="facts">
        <dt>Created</dt>
        <dd>
          <Ago at={session.createdAt} />
        </dd>
        <dt>Agent</dt>
        <dd>{session.agent}</dd>
        {session.host !== null ? (
          <>
            <dt>Host</dt>
            <dd class="host">
              {session.host}
              {session.hostOnline ? null : (
                <>
                  {" "}
                  <span
                    class="badge warn"
                    title="its host stopped heartbeating: the session is kept, read-only until its host is back, or adopted by the host that opens it if that host has fleet.adopt on and its directory"
                  >
                    host offline
                  </span>
                </>
              )}
            </dd>
          </>
        ) : null}
        <dt>Location</dt>
        <dd class="path">{locationName(session.cwd, session.workspace)}</dd>
        <dt>PID</dt>
        <dd class="mono">{session.pid ?? "—"}</dd>
        <dt class="term" title={words.holders.term}>
          {words.holders.plain}
        </dt>
        <dd class="holders">{session.holders}</dd>
        <dt>Turn</dt>
        <dd>
          {session.turnActive && session.turnStartedAt !== null ? (
            <span class="running">
              running for <Elapsed since={session.turnStartedAt} />
            </span>
          ) : (
            "idle"
          )}
        </dd>
        {session.pendingQuestions > 0 ? (
          <>
            <dt>Questions</dt>
            <dd class="attention">{session.pendingQuestions} waiting</dd>
          </>
        ) : null}
        {session.releaseAt !== null && session.holders === 0 ? (
          <>
            <dt class="term" title={words.release.term}>
              {words.release.plain}
            </dt>
            <dd class="release">
              no client left; the agent process stops <Countdown at={session.releaseAt} expired="any moment" />
            </dd>
          </>
        ) : null}
        <dt>Last event</dt>
        <dd>
          {last ? (
            <>
              {last.message} · <Ago at={last.at} />
            </>
          ) : (
            <>
              updated <Ago at={session.updatedAt} />
            </>
          )}
        </dd>
      </dl>
      <div class="actions">
        <a class="button" href={sessionHref(session.id)} aria-label={`Open ${title}`}>
          Open
        </a>
        <button type="button" class="danger quiet" onClick={onDelete} aria-label={`Delete ${title}`}>
          Delete
        </button>
      </div>
    </li>
  );
}
