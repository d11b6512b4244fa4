import type { DiffLine } from "../content/line-diff.js";
import type { ReviewComment } from "../api/types.js";

/** Where a comment sits: a line of the new file, or (a removed line) of the old one. */
export interface LineAnchor {
  readonly line: number;
  readonly side: ReviewComment["side"];
}

/** The line a diff row stands for, to comment on; null for a hunk's header. */
export function anchorOf(row: DiffLine): LineAnchor | null {
  if (row.kind === "del") return row.oldLine === null ? null : { line: row.oldLine, side: "old" };
  if (row.kind === "hunk" || row.newLine === null) return null;
  return { line: row.newLine, side: "new" };
}

export function anchorKey(anchor: LineAnchor): string {
  return `${anchor.side}:${anchor.line}`;
}

export interface PlacedComments {
  /** By `anchorKey`: the comments shown under that row, oldest first. */
  readonly byRow: ReadonlyMap<string, readonly ReviewComment[]>;
  /** Comments on lines the diff does not show (the file changed since): shown above it, so none is lost. */
  readonly elsewhere: readonly ReviewComment[];
}

/** Puts a file's comments under the rows they were made on. */
export function placeComments(rows: readonly DiffLine[], comments: readonly ReviewComment[]): PlacedComments {
  const shown = new Set<string>();
  for (const row of rows) {
    const anchor = anchorOf(row);
    if (anchor) shown.add(anchorKey(anchor));
  }
  const byRow = new Map<string, ReviewComment[]>();
  const elsewhere: ReviewComment[] = [];
  for (const comment of [...comments].sort((a, b) => a.createdAt - b.createdAt)) {
    const key = anchorKey(comment);
    if (!shown.has(key)) elsewhere.push(comment);
    else byRow.set(key, [...(byRow.get(key) ?? []), comment]);
  }
  return { byRow, elsewhere };
}

/** "src/app.ts:12", or "src/app.ts:12 (removed line)" for the old side, as the agent is told. */
export function anchorWords(path: string, anchor: LineAnchor): string {
  return anchor.side === "old" ? `${path}:${anchor.line} (removed line)` : `${path}:${anchor.line}`;
}
