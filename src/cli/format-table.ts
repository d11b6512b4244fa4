/** A plain text table: a header row and left-aligned columns, for terminals and scripts alike. */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

/** `in 14m 5s`, `3h 2m ago`: a deadline relative to now. */
export function relativeTime(at: number | null, now = Date.now()): string {
  if (at === null) return "-";
  const delta = at - now;
  const seconds = Math.round(Math.abs(delta) / 1000);
  const parts =
    seconds >= 3600
      ? [`${Math.floor(seconds / 3600)}h`, `${Math.floor((seconds % 3600) / 60)}m`]
      : seconds >= 60
        ? [`${Math.floor(seconds / 60)}m`, `${seconds % 60}s`]
        : [`${seconds}s`];
  return delta >= 0 ? `in ${parts.join(" ")}` : `${parts.join(" ")} ago`;
}
