import type { ReviewComment } from "../store/review-comments.js";
import { readChangedFile, type ChangedFileView } from "./changed-file.js";

/**
 * The one prompt that carries a session's review comments to its agent: each as `path:line`
 * (`(old)` for a line of the base's text) and its body, with that line's code quoted when the
 * file is still among the changes (docs/review.md shows an example).
 */
export async function reviewPrompt(cwd: string, comments: readonly ReviewComment[]): Promise<string> {
  const files = new Map<string, ChangedFileView | undefined>();
  for (const path of new Set(comments.map((comment) => comment.path))) {
    // A file reverted since it was commented on: the comment goes without its quote.
    files.set(path, await readChangedFile(cwd, path).catch(() => undefined));
  }
  const parts = comments.map((comment) => {
    const file = files.get(comment.path);
    const text = comment.side === "new" ? file?.newText : file?.oldText;
    const code = text?.split("\n")[comment.line - 1];
    const where = `${comment.path}:${comment.line}${comment.side === "old" ? " (old)" : ""}`;
    return `${where} — ${comment.body}${code === undefined ? "" : `\n    ${comment.line} | ${code}`}`;
  });
  return `Review comments on your changes:\n\n${parts.join("\n\n")}\n`;
}
