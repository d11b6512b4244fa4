import { CreateElicitationResponse, methods, type StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** `/elicit <message>`: asks the client for a one-field form and reports the answer. */
export async function elicit(turn: Turn, message: string): Promise<StopReason> {
  if (!turn.peer.capabilities.elicitation?.form) {
    await turn.say("Cannot /elicit: the client did not advertise form elicitation (clientCapabilities.elicitation.form).");
    return "end_turn";
  }
  const response = await turn.client.request(methods.client.elicitation.create, {
    mode: "form",
    sessionId: turn.sessionId,
    message,
    requestedSchema: {
      type: "object",
      properties: { answer: { type: "string", title: "Answer" } },
      required: ["answer"],
    },
  });
  const content = CreateElicitationResponse.isAccept(response) ? (response.content ?? null) : null;
  await turn.say(`Elicitation action: ${response.action}, content: ${JSON.stringify(content)}`);
  return "end_turn";
}
