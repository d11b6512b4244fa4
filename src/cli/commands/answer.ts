import type { Command } from "commander";
import type { QuestionView } from "../../host/views.js";
import { UsageError } from "../exit-codes.js";
import { callHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

type AnswerFlags = HostFlags & { content?: string };

/** `allow` → a permission option; `accept`/`decline`/`cancel` → a form action (with `--content` JSON for accept). */
export function answerBody(answer: string, content: string | undefined): Record<string, unknown> {
  if (content !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch {
      throw new UsageError(`--content: expected a JSON object, got ${JSON.stringify(content)}`);
    }
    if (answer !== "accept") throw new UsageError("--content goes with the answer accept");
    return { action: "accept", content: parsed };
  }
  return answer === "decline" || answer === "cancel" ? { action: answer } : { optionId: answer };
}

export function register(program: Command): void {
  withHostFlags(
    program
      .command("answer")
      .description("answer a pending question: a permission with one of its option ids, a form with accept --content '{...}' or decline")
      .argument("<question-id>", "the question, from `berth questions`")
      .argument("<answer>", "an option id (e.g. allow), or accept / decline / cancel for a form"),
  )
    .option("--content <json>", "the form's content, as a JSON object, with accept")
    .action((questionId: string, answer: string, flags: AnswerFlags) =>
      runClientCommand("answer", async () => {
        const body = answerBody(answer, flags.content);
        const answered = await callHost<QuestionView>(flags, `/api/questions/${encodeURIComponent(questionId)}/answer`, { method: "POST", body });
        process.stdout.write(`answered ${answered.id} (session ${answered.sessionId})\n`);
      }),
    );
}
