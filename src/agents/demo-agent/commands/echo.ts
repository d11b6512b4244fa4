import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** Enough chunks for clients to see streaming, not one message in one piece. */
const echoPieces = 3;

/** Plain text: streamed back as one agent message in several chunks. */
export async function echo(turn: Turn, text: string): Promise<StopReason> {
  await turn.say(text.trim() ? text : "Nothing to echo: the prompt has no text.", echoPieces);
  return "end_turn";
}
