import { RequestError, type StopReason } from "@agentclientprotocol/sdk";
import type { Turn } from "../turn.js";

/** `/ext <method> [json]`: sends an extension request to the client and reports its answer or error. */
export async function extensionRequest(turn: Turn, method: string, params: unknown): Promise<StopReason> {
  try {
    const result = await turn.client.request(method, params);
    await turn.say(`${method} answered: ${JSON.stringify(result ?? null)}`);
  } catch (error) {
    const code = error instanceof RequestError ? `code ${error.code}` : "no code";
    await turn.say(`${method} failed with ${code}: ${(error as Error).message}`);
  }
  return "end_turn";
}

/** `/extnotify <method> [json]`: sends an extension notification to the client. */
export async function extensionNotification(turn: Turn, method: string, params: unknown): Promise<StopReason> {
  await turn.client.notify(method, params);
  await turn.say(`${method} sent`);
  return "end_turn";
}
