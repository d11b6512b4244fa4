/** `3d 04h`, `23h 59m`, `3m 05s`, `12s`: a countdown or an elapsed time; negative reads as `0s`. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  // Up to two days in hours: a 24 h cap reads `24h 00m`, not `1d 00h`.
  const days = total >= 2 * 86_400 ? Math.floor(total / 86_400) : 0;
  const hours = Math.floor((total - days * 86_400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const pad = (n: number): string => String(n).padStart(2, "0");
  if (days > 0) return `${days}d ${pad(hours)}h`;
  if (hours > 0) return `${hours}h ${pad(minutes)}m`;
  if (minutes > 0) return `${minutes}m ${pad(seconds)}s`;
  return `${seconds}s`;
}

/** `just now`, `5s ago`, `3m ago`, `2h ago`. */
export function formatAgo(at: number, now: number): string {
  return now - at < 1000 ? "just now" : `${formatDuration(now - at).split(" ")[0]} ago`;
}

export function formatClock(at: number): string {
  return new Date(at).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function formatDateTime(at: number): string {
  return new Date(at).toLocaleString();
}

/** The first characters of an id: enough to tell sessions apart on screen. */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

export function locationName(directory: string, workspace: string | null | undefined): string {
  return workspace ? `${directory} · ${workspace}` : directory;
}
