import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { ModelRequest, ModelTurn, WireFormat } from "./script.js";
import { sendEvent, sendJson, startEventStream, waitForHold } from "./sse.js";

/**
 * Anthropic Messages (`POST /v1/messages`, `?beta=true` from claude-agent-acp), as Claude Code
 * speaks it: streamed as named events (message_start, content_block_start/delta/stop for each
 * text and tool_use block, message_delta with the stop reason, message_stop); tool calls are
 * `tool_use` blocks whose input arrives as `input_json_delta` pieces; their results come back in
 * the next request as `tool_result` blocks of a user message.
 */

interface ContentBlock {
  type?: string;
  text?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
}

interface Message {
  role?: string;
  content?: unknown;
}

/** A message's content is a string or an array of blocks. */
function blocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content as ContentBlock[]) : [];
}

/** Claude Code adds `<system-reminder>` text blocks to user messages; they are not what the user typed. */
function isUserTyped(block: ContentBlock): block is ContentBlock & { text: string } {
  return block.type === "text" && typeof block.text === "string" && !block.text.startsWith("<system-reminder>");
}

/** A tool result's content is a string or an array of blocks (text, images); the text, joined. */
function resultText(content: unknown): string {
  return blocks(content)
    .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
    .join("");
}

function parse(body: unknown, path: string): ModelRequest {
  const request = body as { model?: unknown; messages?: unknown; tools?: unknown; stream?: unknown };
  if (typeof request !== "object" || request === null || !Array.isArray(request.messages)) {
    throw new Error("anthropic-messages: the body has no `messages` array");
  }
  const messages = request.messages as Message[];
  const userBlocks = messages.filter((m) => m.role === "user").map((m) => blocks(m.content));
  // The prompt is the last block the user typed: a message of tool results only is not a prompt.
  const typed = userBlocks.findLast((content) => content.some(isUserTyped))?.filter(isUserTyped) ?? [];
  return {
    path,
    format: "anthropic-messages",
    model: typeof request.model === "string" ? request.model : "",
    hasTools: Array.isArray(request.tools) && request.tools.length > 0,
    stream: request.stream === true,
    lastUserText: typed.at(-1)?.text ?? "",
    toolResults: userBlocks
      .flat()
      .filter((block) => block.type === "tool_result")
      .map((block) => ({ callId: typeof block.tool_use_id === "string" ? block.tool_use_id : "", output: resultText(block.content) })),
    raw: body,
  };
}

const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

interface ToolUse {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}

function toolUses(turn: ModelTurn): ToolUse[] {
  return (turn.toolCalls ?? []).map((call) => ({
    type: "tool_use",
    id: `toolu_${randomUUID().replaceAll("-", "").slice(0, 24)}`,
    name: call.name,
    input: call.input,
  }));
}

/** A tool input's JSON in two pieces, as the API streams it (an agent must join the deltas). */
function jsonPieces(input: Record<string, unknown>): string[] {
  const json = JSON.stringify(input);
  const middle = Math.floor(json.length / 2);
  return [json.slice(0, middle), json.slice(middle)];
}

async function respond(turn: ModelTurn, request: ModelRequest, res: ServerResponse): Promise<void> {
  const id = `msg_${randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const calls = toolUses(turn);
  const stopReason = calls.length > 0 ? "tool_use" : "end_turn";
  if (!request.stream) {
    if (!(await waitForHold(res, turn.hold))) return;
    const text = `${turn.text ?? ""}${turn.after ?? ""}`;
    sendJson(res, 200, {
      id,
      type: "message",
      role: "assistant",
      model: request.model,
      content: [...(text ? [{ type: "text", text }] : []), ...calls],
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    });
    return;
  }
  const event = (type: string, data: Record<string, unknown>) => sendEvent(res, { type, ...data }, type);
  startEventStream(res);
  event("message_start", {
    message: {
      id,
      type: "message",
      role: "assistant",
      model: request.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  event("ping", {});
  // The text block stays open across the hold, so text before and after it is one block.
  let index = 0;
  const hasText = Boolean(turn.text || turn.after);
  if (hasText) event("content_block_start", { index, content_block: { type: "text", text: "" } });
  if (turn.text) event("content_block_delta", { index, delta: { type: "text_delta", text: turn.text } });
  if (!(await waitForHold(res, turn.hold))) return;
  if (turn.after) event("content_block_delta", { index, delta: { type: "text_delta", text: turn.after } });
  if (hasText) event("content_block_stop", { index: index++ });
  for (const call of calls) {
    event("content_block_start", { index, content_block: { ...call, input: {} } });
    for (const piece of jsonPieces(call.input)) event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } });
    event("content_block_stop", { index: index++ });
  }
  event("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  event("message_stop", {});
  res.end();
}

export const format: WireFormat = { parse, respond };
