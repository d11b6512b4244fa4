import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** `/mode`: the session's current mode id, so a test sees which mode the agent holds. */
export async function mode(turn: Turn): Promise<StopReason> {
  await turn.say(turn.settings.modeId);
  return "end_turn";
}

/** `/history`: how many prompts came before this one, so a test sees which conversation the agent holds (a fork's too). */
export async function history(turn: Turn): Promise<StopReason> {
  await turn.say(`${turn.promptsBefore} prompts before this one`);
  return "end_turn";
}

/** `/whoami`: the client's name and capabilities as they reached the agent in `initialize`. */
export async function whoami(turn: Turn): Promise<StopReason> {
  await turn.say(JSON.stringify({ name: turn.peer.info?.name ?? null, capabilities: turn.peer.capabilities }));
  return "end_turn";
}
