import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** `/mcp-servers`: the MCP servers this session was last given, as JSON. */
export async function mcpServers(turn: Turn): Promise<StopReason> {
  await turn.say(JSON.stringify(turn.mcpServers));
  return "end_turn";
}
