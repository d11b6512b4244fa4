import { countsText } from "../review/change-words.js";
import { useSessionChanges } from "../review/session-changes.js";
import { changesHref } from "./route.js";

/** The conversation's way to its session's changes, with their +/− totals; nothing while there are none (or no git). */
export function ChangesLink({ sessionId }: { sessionId: string }) {
  const { changes } = useSessionChanges(sessionId);
  if (changes.name !== "loaded" || changes.changes.totals.files === 0) return null;
  const { totals } = changes.changes;
  return (
    <a class="button changes-link" href={changesHref(sessionId)} title={`${totals.files} ${totals.files === 1 ? "file" : "files"} changed`}>
      Changes <span class="diff-stat">{countsText(totals)}</span>
    </a>
  );
}
