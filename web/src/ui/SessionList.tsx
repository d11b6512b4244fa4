import type { SessionView, WorktreeStatusView } from "../api/types.js";
import { shortId } from "../util/format.js";
import { Ago } from "./Countdown.js";
import { HOST_HREF, sessionHref } from "./route.js";
import { SessionFilters } from "./SessionFilters.js";
import { isFiltering, type SessionFilter } from "./session-filter.js";
import { groupByRepository } from "./session-groups.js";
import { SessionChip } from "./StateBadge.js";
import { useWorktreeStatus } from "./worktree-status.js";

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
          {groupByRepository(shown).map((group) => (
            <li key={group.path} class="session-group">
              <h3 class="group-name" title={group.path}>
                {group.name}
              </h3>
              <ul class="group-sessions" aria-label={`Sessions in ${group.name}`}>
                {group.sessions.map((session) => (
                  <SessionRow key={session.id} session={session} open={session.id === openSessionId} />
                ))}
              </ul>
            </li>
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
  const status = useWorktreeStatus(session);
  return (
    <li class={`session-row${open ? " current" : ""}`} data-session-id={session.id}>
      <a class="session-link row-link" href={sessionHref(session.id)} aria-current={open ? "page" : undefined} title={lastWords(session)}>
        <span class="session-title">{title}</span>
        <Divergence base={session.worktree?.base} status={status} />
        <SessionChip session={session} status={status} />
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

/** "↑2 ↓3" once the base moved on (behind > 0): the branch's own commits and the base's since; empty otherwise, keeping the line's columns. */
function Divergence({ base, status }: { base: string | undefined; status: WorktreeStatusView | null }) {
  if (!status || status.behind === 0) return <span class="session-divergence" />;
  const words = `${status.ahead} ${status.ahead === 1 ? "commit" : "commits"} ahead of ${base}, ${status.behind} behind`;
  return (
    <span class="session-divergence" title={words}>
      <span aria-hidden="true">
        ↑{status.ahead} ↓{status.behind}
      </span>
      <span class="visually-hidden">{words}</span>
    </span>
  );
}
