import { structuredPatch } from "diff";

type DiffLineKind = "add" | "del" | "context" | "hunk";

export interface DiffLine {
  readonly kind: DiffLineKind;
  readonly text: string;
  /** Line numbers in the old and new file (null where the line is not in that file). */
  readonly oldLine: number | null;
  readonly newLine: number | null;
}

export interface LineDiff {
  readonly lines: readonly DiffLine[];
  readonly added: number;
  readonly removed: number;
  /** The diff took too long (huge files): every line of the new text is shown as added. */
  readonly approximate: boolean;
}

/** Lines of context kept around each change, as `git diff` does. */
const CONTEXT = 3;
/** A diff taking longer than this (a rewritten megabyte file) gives up rather than freeze the page. */
const TIMEOUT_MS = 150;

/** The change from `oldText` (null: a new file) to `newText`, line by line, in hunks. */
export function lineDiff(oldText: string | null, newText: string): LineDiff {
  const patch = structuredPatch("a", "b", oldText ?? "", newText, undefined, undefined, { context: CONTEXT, timeout: TIMEOUT_MS });
  if (!patch) return wholeFile(newText);
  const lines: DiffLine[] = [];
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    lines.push({ kind: "hunk", text: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`, oldLine: null, newLine: null });
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    for (const line of hunk.lines) {
      const mark = line[0];
      const text = line.slice(1);
      if (mark === "+") {
        lines.push({ kind: "add", text, oldLine: null, newLine: newLine++ });
        added++;
      } else if (mark === "-") {
        lines.push({ kind: "del", text, oldLine: oldLine++, newLine: null });
        removed++;
      } else if (mark === " ") {
        lines.push({ kind: "context", text, oldLine: oldLine++, newLine: newLine++ });
      }
      // "\ No newline at end of file" lines are left out.
    }
  }
  return { lines, added, removed, approximate: false };
}

function wholeFile(newText: string): LineDiff {
  const lines = newText.split("\n").map((text, i): DiffLine => ({ kind: "add", text, oldLine: null, newLine: i + 1 }));
  return { lines, added: lines.length, removed: 0, approximate: true };
}
