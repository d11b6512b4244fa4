import { randomUUID } from "node:crypto";
import { methods, type StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/**
 * `/edit <path> <content>`: replaces a file's content through the client (`fs/read_text_file`,
 * `fs/write_text_file`) and shows the change as a tool call with a diff, as coding agents do.
 */
export async function editFile(turn: Turn, path: string, content: string): Promise<StopReason> {
  const fs = turn.peer.capabilities.fs;
  if (!fs?.readTextFile || !fs.writeTextFile) {
    await turn.say("/edit needs a client that offers fs/read_text_file and fs/write_text_file.");
    return "end_turn";
  }
  const toolCallId = `edit-${randomUUID()}`;
  const title = `Edit ${path}`;
  await turn.send({ sessionUpdate: "tool_call", toolCallId, title, kind: "edit", status: "in_progress", locations: [{ path }], rawInput: { path } });
  const oldText = await turn.client
    .request(methods.client.fs.readTextFile, { sessionId: turn.sessionId, path })
    .then(({ content: text }) => text)
    .catch(() => null);
  // Shells and editors end files with a newline; so does this agent.
  const newText = content.endsWith("\n") ? content : `${content}\n`;
  try {
    await turn.client.request(methods.client.fs.writeTextFile, { sessionId: turn.sessionId, path, content: newText });
  } catch (error) {
    await turn.send({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
    await turn.say(`Could not write ${path}: ${error instanceof Error ? error.message : String(error)}`);
    return "end_turn";
  }
  await turn.send({ sessionUpdate: "tool_call_update", toolCallId, status: "completed", content: [{ type: "diff", path, oldText, newText }] });
  turn.append({ kind: "tool_call", toolCallId, title, status: "completed", output: `edited ${path}` });
  await turn.say(`Edited \`${path}\`.`);
  return "end_turn";
}
