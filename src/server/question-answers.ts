import type { CreateElicitationResponse, RequestPermissionResponse } from "@agentclientprotocol/sdk";
import type { QuestionAnswer } from "../host/views.js";

// The client's side of a question: how a client's reply becomes an answer.

/** A client's reply to a permission request, as an answer; `cancelled` is no answer (others may still give one). */
export function answerFromPermission(response: RequestPermissionResponse): QuestionAnswer | undefined {
  return response.outcome.outcome === "selected" ? { optionId: response.outcome.optionId } : undefined;
}

/** A client's reply to a form request, as an answer. */
export function answerFromElicitation(response: CreateElicitationResponse): QuestionAnswer {
  if (response.action === "accept") return { action: "accept", content: (response as { content?: Record<string, unknown> | null }).content ?? {} };
  return { action: response.action === "decline" ? "decline" : "cancel" };
}
