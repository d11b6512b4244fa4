import { useNow } from "../live/now.js";
import { formatAgo, formatDateTime, formatDuration } from "../util/format.js";

/** Time left until `at`, ticking locally once a second. */
export function Countdown({ at, expired = "now" }: { at: number; expired?: string }) {
  const now = useNow();
  return (
    <time class="countdown" dateTime={new Date(at).toISOString()} title={formatDateTime(at)}>
      {at <= now ? expired : `in ${formatDuration(at - now)}`}
    </time>
  );
}

/** Time since `at`, ticking locally once a second. */
export function Elapsed({ since }: { since: number }) {
  const now = useNow();
  return (
    <time class="countdown" dateTime={new Date(since).toISOString()} title={formatDateTime(since)}>
      {formatDuration(now - since)}
    </time>
  );
}

export function Ago({ at }: { at: number }) {
  const now = useNow();
  return (
    <time dateTime={new Date(at).toISOString()} title={formatDateTime(at)}>
      {formatAgo(at, now)}
    </time>
  );
}
