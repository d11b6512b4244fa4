import type { SessionView, StampedRecord } from "../api/types.js";
import { formatClock, formatDateTime } from "../util/format.js";
import { recordDetails, recordTone } from "./record-text.js";

const SHOWN = 60;

/** Recent lifecycle records, newest first, as they happen. */
export function FeedPanel({ records, sessions }: { records: readonly StampedRecord[]; sessions: readonly SessionView[] }) {
  const titles = new Map(sessions.map((s) => [s.id, s.title ?? ""]));
  const recent = records.slice(-SHOWN).reverse();
  return (
    <section class="panel" aria-labelledby="feed-heading">
      <h2 id="feed-heading">Lifecycle</h2>
      {recent.length === 0 ? (
        <p class="empty">Nothing has happened yet.</p>
      ) : (
        <ol
          class="feed"
          aria-label="Recent lifecycle records, newest first"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: it scrolls on its own, and a keyboard scrolls it only with the focus in it
          tabIndex={0}
        >
          {recent.map(({ id, at, message, record }) => (
            <li key={id} class={`tone-${recordTone(record)}`}>
              <time dateTime={new Date(at).toISOString()} title={formatDateTime(at)}>
                {formatClock(at)}
              </time>
              <span class="what">{message}</span>
              <span class="detail">{recordDetails(record, (sessionId) => titles.get(sessionId) ?? "")}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
