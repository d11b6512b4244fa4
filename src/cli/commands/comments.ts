import type { Command } from "commander";
import type { ReviewComment } from "../../host/views.js";
import { formatTable } from "../format-table.js";
import { callHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

type CommentsFlags = HostFlags & { json?: boolean; send?: boolean };

/** `path:line`, with `(old)` for a line of the base's text: as the prompt to the agent names it. */
export function commentPlace(comment: Pick<ReviewComment, "path" | "line" | "side">): string {
  return `${comment.path}:${comment.line}${comment.side === "old" ? " (old)" : ""}`;
}

function commentRows(comments: readonly ReviewComment[]): string {
  if (comments.length === 0) return "no review comments";
  return formatTable(
    ["COMMENT", "WHERE", "SENT", "TEXT"],
    comments.map((comment) => [
      comment.id,
      commentPlace(comment),
      comment.sentAt === null ? "-" : new Date(comment.sentAt).toISOString(),
      comment.body.replace(/\s+/g, " "),
    ]),
  );
}

export function register(program: Command): void {
  withHostFlags(
    program
      .command("comments")
      .description("a session's review comments; --send sends the unsent ones to its agent as one prompt")
      .argument("<session>", "the session id, from `berth sessions`"),
  )
    .option("--send", "send every unsent comment to the agent (one prompt) and mark them sent")
    .option("--json", "print JSON")
    .action((session: string, flags: CommentsFlags) =>
      runClientCommand("comments", async () => {
        const path = `/api/sessions/${encodeURIComponent(session)}/comments`;
        if (flags.send) {
          const sent = await callHost<{ comments: ReviewComment[]; prompt: string }>(flags, `${path}/send`, { method: "POST" });
          const count = sent.comments.length;
          process.stdout.write(
            flags.json ? `${JSON.stringify(sent, null, 2)}\n` : `sent ${count} comment${count === 1 ? "" : "s"} to the agent:\n\n${sent.prompt}`,
          );
          return;
        }
        const { comments } = await callHost<{ comments: ReviewComment[] }>(flags, path);
        process.stdout.write(`${flags.json ? JSON.stringify(comments, null, 2) : commentRows(comments)}\n`);
      }),
    );
}
