import { methods, type AgentContext, type SessionUpdate } from "@agentclientprotocol/sdk";
import { floodChunk } from "./commands/flood.js";
import type { Conversation, ConversationEntry } from "./conversation-store.js";

/** Sends a stored conversation back as `session/update` notifications, as `session/load` requires. */
export async function replayConversation(client: AgentContext, conversation: Conversation): Promise<void> {
  for (const entry of conversation.entries) {
    for (const update of updatesOf(entry)) {
      await client.notify(methods.client.session.update, { sessionId: conversation.sessionId, update });
    }
  }
}

function* updatesOf(entry: ConversationEntry): Iterable<SessionUpdate> {
  switch (entry.kind) {
    case "user_message":
      yield { sessionUpdate: "user_message_chunk", messageId: entry.messageId, content: text(entry.text) };
      return;
    case "agent_message":
      yield { sessionUpdate: "agent_message_chunk", messageId: entry.messageId, content: text(entry.text) };
      return;
    case "agent_flood":
      for (let index = 0; index < entry.count; index += 1) {
        yield {
          sessionUpdate: "agent_message_chunk",
          messageId: entry.messageId,
          content: text(floodChunk(index, entry.bytes)),
        };
      }
      return;
    case "tool_call":
      // Only `/run` records tool calls; its terminal is gone, so the output is replayed as text.
      yield {
        sessionUpdate: "tool_call",
        toolCallId: entry.toolCallId,
        title: entry.title,
        kind: "execute",
        status: entry.status,
        content: [{ type: "content", content: text(entry.output) }],
      };
      return;
  }
}

function text(value: string): { type: "text"; text: string } {
  return { type: "text", text: value };
}
