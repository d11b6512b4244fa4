import type { ChangedFile, SessionChanges } from "../api/types.js";

type ChangeStatus = ChangedFile["status"];

type ChangeTotals = SessionChanges["totals"];

/** The letter `git status` shows for a change, and the words a person reads for it. */
const statusMarks: Readonly<Record<ChangeStatus, { readonly letter: string; readonly words: string }>> = {
  added: { letter: "A", words: "added" },
  modified: { letter: "M", words: "modified" },
  deleted: { letter: "D", words: "deleted" },
  renamed: { letter: "R", words: "renamed" },
};

export function statusLetter(status: ChangeStatus): string {
  return statusMarks[status]?.letter ?? "?";
}

/** "modified", or "renamed from old/name.ts". */
export function statusWords(file: Pick<ChangedFile, "status" | "oldPath">): string {
  const words = statusMarks[file.status]?.words ?? file.status;
  return file.oldPath !== undefined && file.oldPath !== "" ? `${words} from ${file.oldPath}` : words;
}

/** "+12 −3", with a real minus sign as the diffs show it. */
export function countsText(counts: Pick<ChangeTotals, "added" | "removed">): string {
  return `+${counts.added} −${counts.removed}`;
}

/** "3 files changed, +12 −3", or "No changes" (nothing to review). */
export function totalsText(totals: ChangeTotals): string {
  if (totals.files === 0) return "No changes";
  return `${totals.files} ${totals.files === 1 ? "file" : "files"} changed, ${countsText(totals)}`;
}

/** A base as a person reads it: a branch's name as it is, a commit's id cut to 12 characters as git shows it. */
export function baseWords(base: string): string {
  return /^[0-9a-f]{40}$/.test(base) ? base.slice(0, 12) : base;
}
