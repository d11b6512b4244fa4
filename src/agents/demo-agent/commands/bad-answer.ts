import { DEFAULT_MAX_MESSAGE_BYTES, type PromptResponse } from "@agentclientprotocol/sdk";

export type BadAnswerKind = "too-large" | "not-json";

/** How far past the client's message limit a too-large answer goes. */
const excessChars = 1024 * 1024;

/**
 * `/bad-answer`: the line the agent writes on its stdout in place of its answer to `session/prompt` `id`, a client
 * must refuse: `response` padded past the SDK's message limit, or cut short of its closing brace (still showing its id).
 */
export function badAnswerLine(id: string | number | null, response: PromptResponse, kind: BadAnswerKind): string {
  const answer = { jsonrpc: "2.0", id, result: response };
  if (kind === "not-json") return `${JSON.stringify(answer).slice(0, -1)}\n`;
  const padding = "x".repeat(DEFAULT_MAX_MESSAGE_BYTES + excessChars);
  return `${JSON.stringify({ ...answer, result: { ...response, _meta: { ...response._meta, "berth-demo/padding": padding } } })}\n`;
}
