import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { ModelRequest, ModelTurn, WireFormat } from "./script.js";
import { sendEvent, sendJson, startEventStream, waitForHold } from "./sse.js";

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), as opencode's OpenAI-compatible provider
 * and local servers (Ollama, vLLM, llama.cpp) speak it: streamed as `chat.completion.chunk`s ending
 * with `data: [DONE]`, tool calls as `delta.tool_calls`, results coming back as `role: "tool"` messages.
 */

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
}

/** `content` is a string or an array of parts; the text parts, joined. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { type?: string; text?: unknown }) => (part?.type === "text" && typeof part.text === "string" ? part.text : "")).join("");
}

function parse(body: unknown, path: string): ModelRequest {
  const request = body as { model?: unknown; messages?: unknown; tools?: unknown; stream?: unknown };
  if (typeof request !== "object" || request === null || !Array.isArray(request.messages)) {
    throw new Error("openai-chat: the body has no `messages` array");
  }
  const messages = request.messages as ChatMessage[];
  const lastUser = messages.findLast((m) => m.role === "user");
  return {
    path,
    format: "openai-chat",
    model: typeof request.model === "string" ? request.model : "",
    hasTools: Array.isArray(request.tools) && request.tools.length > 0,
    stream: request.stream === true,
    lastUserText: lastUser ? contentText(lastUser.content) : "",
    toolResults: messages.filter((m) => m.role === "tool").map((m) => ({ callId: m.tool_call_id ?? "", output: contentText(m.content) })),
    raw: body,
  };
}

const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function toolCalls(turn: ModelTurn) {
  return (turn.toolCalls ?? []).map((call, index) => ({
    index,
    id: `call_${randomUUID().replaceAll("-", "").slice(0, 12)}`,
    type: "function" as const,
    function: { name: call.name, arguments: JSON.stringify(call.input) },
  }));
}

async function respond(turn: ModelTurn, request: ModelRequest, res: ServerResponse): Promise<void> {
  const id = `chatcmpl-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const calls = toolCalls(turn);
  const finishReason = calls.length > 0 ? "tool_calls" : "stop";
  if (!request.stream) {
    if (!(await waitForHold(res, turn.hold))) return;
    const content = `${turn.text ?? ""}${turn.after ?? ""}`;
    sendJson(res, 200, {
      id,
      object: "chat.completion",
      created,
      model: request.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: content || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
          finish_reason: finishReason,
        },
      ],
      usage,
    });
    return;
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    sendEvent(res, {
      id,
      object: "chat.completion.chunk",
      created,
      model: request.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    });
  startEventStream(res);
  chunk({ role: "assistant", content: "" });
  if (turn.text) chunk({ content: turn.text });
  if (!(await waitForHold(res, turn.hold))) return;
  if (turn.after) chunk({ content: turn.after });
  for (const call of calls) chunk({ tool_calls: [call] });
  chunk({}, finishReason, { usage });
  sendEvent(res, "[DONE]");
  res.end();
}

export const format: WireFormat = { parse, respond };
