import type { SessionView } from "../api/types.js";
import { shortId } from "../util/format.js";
import { Ago } from "./Countdown.js";
import { HOST_HREF, sessionHref } from "./route.js";
import { SessionFilters } from "./SessionFilters.js";
import { isFiltering, type SessionFilter } from "./session-filter.js";
import { ActivityChip } from "./StateBadge.js";

/** The sidebar: every session (as searched and filtered) in one line each: its title, what its agent is doing, when it last moved. */
export function SessionList({
  sessions,
  shown,
  filter,
  onFilter,
  openSessionId,
}: {
  sessions: readonly SessionView[];
  /** The sessions the filter lets through, in order. */
  shown: readonly SessionView[];
  filter: SessionFilter;
  onFilter: (filter: SessionFilter) => void;
  openSessionId: string | null;
}) {
  return (
    <nav class="sidebar" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading" class="sidebar-heading">
        Sessions <span class="count">{sessions.length}</span>
      </h2>
      {sessions.length > 0 ? <SessionFilters sessions={sessions} shown={shown.length} filter={filter} onChange={onFilter} /> : null}
      {sessions.length === 0 ? (
        <p class="empty">No sessions yet.</p>
      ) : shown.length === 0 && isFiltering(filter) ? (
        <p class="empty">No session matches. Clear the search or the filters to see all {sessions.length}.</p>
      ) : (
        <ul class="session-list">
          {shown.map((session) => (
            <SessionRow key={session.id} session={session} open={session.id === openSessionId} />
          ))}
        </ul>
      )}
      <a class="host-link" href={HOST_HREF}>
        Host: agent processes, locations, lifecycle
      </a>
    </nav>
  );
}

function SessionRow({ session, open }: { session: SessionView; open: boolean }) {
  const title = session.title ?? `Untitled session ${shortId(session.id)}`;
  return (
    <li class={`session-row${open ? " current" : ""}`} data-session-id={session.id}>
      <a class="session-link" href={sessionHref(session.id)} aria-current={open ? "page" : undefined} title={lastWords(session)}>
        <span class="session-title">{title}</span>
        <ActivityChip session={session} />
        <span class="session-when">
          <Ago at={lastMoved(session)} />
        </span>
      </a>
    </li>
  );
}

/** The end of the conversation, and who said it, for the line's tooltip. */
function lastWords({ preview, agent }: SessionView): string | undefined {
  return preview ? `${preview.role === "agent" ? agent : "You"}: ${preview.text}` : undefined;
}

/** When something last happened in the session: its last words, its last turn's end, else its last change. */
function lastMoved(session: SessionView): number {
  return Math.max(session.preview?.at ?? 0, session.lastTurn?.at ?? 0, session.updatedAt);
}
