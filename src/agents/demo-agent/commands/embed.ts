import { randomUUID } from "node:crypto";
import type { StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** What claude-agent-acp and codex-acp read from `clientCapabilities._meta` before they embed a command's terminal. */
const TERMINAL_OUTPUT_META = "terminal_output";

/**
 * `/embed <output>`: reports a command the agent ran itself, as claude-agent-acp reports its Bash tool. A client that
 * declared `_meta.terminal_output` gets a `terminal` content whose id the agent owns, with the terminal in the
 * updates' `_meta` (`terminal_info`, then `terminal_output` with the output, then `terminal_exit` as it completes);
 * any other client gets the output as text.
 */
export async function embed(turn: Turn, output: string): Promise<StopReason> {
  const toolCallId = `embed-${randomUUID()}`;
  const rawInput = { command: "demo" };
  if (turn.peer.capabilities._meta?.[TERMINAL_OUTPUT_META] !== true) {
    await turn.send({ sessionUpdate: "tool_call", toolCallId, title: "demo", kind: "execute", status: "pending", rawInput });
    await turn.send({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: `\`\`\`console\n${output}\n\`\`\`` } }],
    });
    return "end_turn";
  }
  const terminalId = toolCallId;
  const content = [{ type: "terminal" as const, terminalId }];
  await turn.send({
    sessionUpdate: "tool_call",
    toolCallId,
    title: "demo",
    kind: "execute",
    status: "pending",
    rawInput,
    content,
    _meta: { terminal_info: { terminal_id: terminalId } },
  });
  await turn.send({ sessionUpdate: "tool_call_update", toolCallId, _meta: { terminal_output: { terminal_id: terminalId, data: output } } });
  await turn.send({
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "completed",
    content,
    _meta: { terminal_exit: { terminal_id: terminalId, exit_code: 0, signal: null } },
  });
  return "end_turn";
}
