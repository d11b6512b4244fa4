import { randomUUID } from "node:crypto";
import { methods, type PermissionOption, type StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

const askOptions: PermissionOption[] = [
  { optionId: "allow", name: "Allow", kind: "allow_once" },
  { optionId: "deny", name: "Deny", kind: "reject_once" },
];

/** `/ask <question>`: asks the client for permission and reports the chosen option. */
export async function ask(turn: Turn, question: string): Promise<StopReason> {
  const { outcome } = await turn.client.request(methods.client.session.requestPermission, {
    sessionId: turn.sessionId,
    toolCall: { toolCallId: `ask-${randomUUID()}`, title: question, kind: "other", status: "pending" },
    options: askOptions,
  });
  if (outcome.outcome === "cancelled") return "cancelled";
  await turn.say(`You chose: ${outcome.optionId}`);
  return "end_turn";
}
