import type { SessionView } from "../api/types.js";
import { countsText } from "../review/change-words.js";
import { useSessionChanges } from "../review/session-changes.js";
import { changesHref } from "./route.js";

/**
 * The conversation's way to its session's changes, with their +/− totals; nothing while there are none (or no git).
 * A landed or discarded worktree's directory is gone: the link says which, and reads nothing.
 */
export function ChangesLink({ sessionId, session }: { sessionId: string; session: SessionView | undefined }) {
  const closed = session?.worktree && session.worktree.state !== "active" ? session.worktree.state : null;
  const { changes } = useSessionChanges(sessionId, closed === null);
  if (closed !== null)
    return (
      <a class="button changes-link" href={changesHref(sessionId)}>
        Changes ({closed})
      </a>
    );
  if (changes.name !== "loaded" || changes.changes.totals.files === 0) return null;
  const { totals } = changes.changes;
  return (
    <a class="button changes-link" href={changesHref(sessionId)} title={`${totals.files} ${totals.files === 1 ? "file" : "files"} changed`}>
      Changes <span class="diff-stat">{countsText(totals)}</span>
    </a>
  );
}
