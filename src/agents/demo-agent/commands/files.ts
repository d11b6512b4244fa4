import { methods, type StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** `/read <path>`: reads a file through the client (`fs/read_text_file`) and reports it or the refusal. */
export async function readFile(turn: Turn, path: string): Promise<StopReason> {
  if (!turn.peer.capabilities.fs?.readTextFile) {
    await turn.say("/read needs a client that offers fs/read_text_file.");
    return "end_turn";
  }
  try {
    const { content } = await turn.client.request(methods.client.fs.readTextFile, { sessionId: turn.sessionId, path });
    await turn.say(`Contents of ${path}:\n${content}`);
  } catch (error) {
    await turn.say(`Could not read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return "end_turn";
}

/** `/write <path> <content>`: writes a file through the client (`fs/write_text_file`). */
export async function writeFile(turn: Turn, path: string, content: string): Promise<StopReason> {
  if (!turn.peer.capabilities.fs?.writeTextFile) {
    await turn.say("/write needs a client that offers fs/write_text_file.");
    return "end_turn";
  }
  try {
    await turn.client.request(methods.client.fs.writeTextFile, { sessionId: turn.sessionId, path, content });
    await turn.say(`Wrote ${content.length} characters to ${path}`);
  } catch (error) {
    await turn.say(`Could not write ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return "end_turn";
}
