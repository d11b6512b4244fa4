import type { Command } from "commander";
import type { ReviewComment } from "../../host/views.js";
import { UsageError } from "../exit-codes.js";
import { callHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";
import { commentPlace } from "./comments.js";

type CommentFlags = HostFlags & { old?: boolean; json?: boolean };

/** `src/a.ts:12` → its path and line; anything else is a usage error naming it. */
export function parsePlace(place: string): { path: string; line: number } {
  const match = /^(.+):([1-9]\d*)$/.exec(place);
  if (!match) throw new UsageError(`expected <file:line>, e.g. src/a.ts:12, got ${JSON.stringify(place)}`);
  return { path: match[1]!, line: Number(match[2]) };
}

export function register(program: Command): void {
  withHostFlags(
    program
      .command("comment")
      .description("add a review comment on a line of a session's changes (sent later with `berth comments <session> --send`)")
      .argument("<session>", "the session id, from `berth sessions`")
      .argument("<file:line>", "a changed file's path (relative to the repository) and line, e.g. src/a.ts:12")
      .argument("<text...>", "the comment"),
  )
    .option("--old", "the line number is the base's (a removed line), not the changed file's")
    .option("--json", "print JSON")
    .action((session: string, place: string, words: string[], flags: CommentFlags) =>
      runClientCommand("comment", async () => {
        const body = { ...parsePlace(place), side: flags.old ? "old" : "new", body: words.join(" ") };
        const comment = await callHost<ReviewComment>(flags, `/api/sessions/${encodeURIComponent(session)}/comments`, { method: "POST", body });
        process.stdout.write(flags.json ? `${JSON.stringify(comment, null, 2)}\n` : `added ${comment.id} on ${commentPlace(comment)}\n`);
      }),
    );
}
