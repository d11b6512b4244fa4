import type { CreateElicitationResponse, RequestPermissionResponse } from "@agentclientprotocol/sdk";
import type { QuestionAnswer } from "../host/views.js";

// The client's side of a question: how a client's reply becomes an answer. The SDK does not check a reply's shape,
// so a reply that is none of ACP's is refused here, by name, rather than read as some answer.

/** A client's reply to a permission request, as an answer; `cancelled` is no answer (others may still give one). */
export function answerFromPermission(response: RequestPermissionResponse): QuestionAnswer | undefined {
  const outcome: unknown = (response as { outcome?: unknown } | null)?.outcome;
  const { outcome: kind, optionId } = (isObject(outcome) ? outcome : {}) as { outcome?: unknown; optionId?: unknown };
  if (kind === "selected" && typeof optionId === "string") return { optionId };
  if (kind === "cancelled") return undefined;
  throw new Error(`the reply is no permission outcome ({ "outcome": "selected", "optionId": ... } or "cancelled"): ${excerpt(response)}`);
}

/** A client's reply to a form request, as an answer. */
export function answerFromElicitation(response: CreateElicitationResponse): QuestionAnswer {
  const { action, content } = (isObject(response) ? response : {}) as { action?: unknown; content?: unknown };
  if (action === "accept" && (content === undefined || content === null || isObject(content)))
    return { action: "accept", content: (content as Record<string, unknown> | null | undefined) ?? {} };
  if (action === "decline" || action === "cancel") return { action };
  throw new Error(`the reply is no form answer ("accept" with an object of fields, "decline" or "cancel"): ${excerpt(response)}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What the client sent, short enough for a log line. */
function excerpt(reply: unknown): string {
  const text = JSON.stringify(reply) ?? String(reply);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
