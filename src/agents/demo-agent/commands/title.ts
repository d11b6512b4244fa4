import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** `/title`: the agent's own name for its session, sent as ACP's `session_info_update`, then said. */
export async function title(turn: Turn, text: string): Promise<StopReason> {
  await turn.send({ sessionUpdate: "session_info_update", title: text });
  await turn.say(`Titled: ${text}`);
  return "end_turn";
}
