import type {
  CreateElicitationRequest,
  CreateElicitationResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
} from "@agentclientprotocol/sdk";
import type { QuestionOutcome } from "./pending-questions.js";

/** What an agent asked: a permission with options, or a form. */
export type QuestionRequest =
  | { readonly kind: "permission"; readonly request: RequestPermissionRequest }
  | { readonly kind: "elicitation"; readonly request: CreateElicitationRequest };

/** A person's answer: a permission option, or a form action with its content. */
export type QuestionAnswer =
  | { readonly optionId: string }
  | { readonly action: "accept"; readonly content: Record<string, unknown> }
  | { readonly action: "decline" | "cancel" };

/** How a waiting question ended, as the agent's permission request is answered. */
export function permissionResponse(result: QuestionOutcome<QuestionAnswer>): RequestPermissionResponse {
  if (result.outcome === "answered" && "optionId" in result.answer) {
    return { outcome: { outcome: "selected", optionId: result.answer.optionId } };
  }
  return { outcome: { outcome: "cancelled" } };
}

/** How a waiting question ended, as the agent's form request is answered. */
export function elicitationResponse(result: QuestionOutcome<QuestionAnswer>): CreateElicitationResponse {
  if (result.outcome !== "answered" || !("action" in result.answer)) return { action: "cancel" };
  const answer = result.answer;
  return answer.action === "accept" ? { action: "accept", content: answer.content as never } : { action: answer.action };
}

/** A client's reply to a permission request, as an answer; `cancelled` is no answer (others may still give one). */
export function answerFromPermission(response: RequestPermissionResponse): QuestionAnswer | undefined {
  return response.outcome.outcome === "selected" ? { optionId: response.outcome.optionId } : undefined;
}

/** A client's reply to a form request, as an answer. */
export function answerFromElicitation(response: CreateElicitationResponse): QuestionAnswer {
  if (response.action === "accept") return { action: "accept", content: (response as { content?: Record<string, unknown> | null }).content ?? {} };
  return { action: response.action === "decline" ? "decline" : "cancel" };
}
