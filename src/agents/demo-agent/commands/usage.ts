import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** `/usage`: a `usage_update` as an agent with a context window and a price sends it, so a client's display can be shown. */
export async function usage(turn: Turn, used: number, size: number, cost: { amount: number; currency: string } | null): Promise<StopReason> {
  await turn.send({ sessionUpdate: "usage_update", used, size, ...(cost ? { cost } : {}) });
  await turn.say(`Context: ${used} of ${size} tokens${cost ? `; cost so far ${cost.amount} ${cost.currency}` : ""}.`);
  return "end_turn";
}
