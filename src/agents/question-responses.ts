import type { CreateElicitationResponse, RequestPermissionResponse } from "@agentclientprotocol/sdk";
import type { QuestionOutcome } from "../location/pending-questions.js";
import type { QuestionAnswer } from "../location/question-types.js";

// The agent's side of a question: how the answer a person gave (or its cancellation) goes back to the asking agent.

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
