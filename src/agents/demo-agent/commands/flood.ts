import { randomUUID } from "node:crypto";
import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** Chunk `index` of a flood: `bytes` ASCII letters, the same every time (so replay regenerates it). */
export function floodChunk(index: number, bytes: number): string {
  return String.fromCharCode(97 + (index % 26)).repeat(bytes);
}

/** `/flood <count> <bytes>`: one agent message of `count` chunks, for throughput benchmarks. */
export async function flood(turn: Turn, count: number, bytes: number): Promise<StopReason> {
  const messageId = randomUUID();
  let sent = 0;
  while (sent < count && !turn.cancelled.aborted) {
    await turn.send({
      sessionUpdate: "agent_message_chunk",
      messageId,
      content: { type: "text", text: floodChunk(sent, bytes) },
    });
    sent += 1;
  }
  if (sent > 0) turn.append({ kind: "agent_flood", messageId, count: sent, bytes });
  return "end_turn";
}
