import type { Command } from "commander";
import type { QuestionView } from "../../host/views.js";
import { formatTable, relativeTime } from "../format-table.js";
import { callHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

/** What a question asks, and how to answer it, in one line. */
function describe(question: QuestionView): [string, string] {
  const request = question.request as {
    toolCall?: { title?: string };
    options?: Array<{ optionId: string }>;
    message?: string;
  };
  if (question.kind === "permission") {
    return [request.toolCall?.title ?? "(permission)", (request.options ?? []).map((o) => o.optionId).join(" | ")];
  }
  return [request.message ?? "(form)", "accept --content '{...}' | decline"];
}

export function register(program: Command): void {
  withHostFlags(program.command("questions").description("list the questions waiting for a person"))
    .option("--json", "print JSON")
    .action((flags: HostFlags & { json?: boolean }) =>
      runClientCommand("questions", async () => {
        const { questions } = await callHost<{ questions: QuestionView[] }>(flags, "/api/questions");
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(questions, null, 2)}\n`);
          return;
        }
        const now = Date.now();
        const rows = questions.map((q) => [q.id, q.sessionId, q.kind, relativeTime(q.askedAt, now), ...describe(q)]);
        process.stdout.write(`${formatTable(["QUESTION", "SESSION", "KIND", "ASKED", "ASKS", "ANSWERS"], rows)}\n`);
      }),
    );
}
