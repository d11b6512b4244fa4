import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { ModelRequest, ModelTurn, WireFormat } from "./script.js";
import { sendEvent, sendJson, startEventStream, waitForHold } from "./sse.js";

/**
 * OpenAI Responses (`POST /v1/responses`), as codex-acp speaks it through a custom provider with
 * `wire_api = "responses"`: streamed as named events (response.created, then per output item
 * output_item.added … output_item.done, then response.completed). A tool call is a `function_call`
 * item (JSON `arguments`, e.g. codex's `exec_command` with `{cmd}`) or, for a freeform tool
 * (`"type": "custom"` in the request, e.g. codex's `apply_patch`), a `custom_tool_call` item whose
 * text is the step's `input.input`. Results come back as `function_call_output` /
 * `custom_tool_call_output` input items of the next request.
 */

interface InputItem {
  type?: string;
  role?: string;
  content?: unknown;
  call_id?: unknown;
  output?: unknown;
}

/** Message content and tool outputs are a string or an array of parts; the text parts, joined. */
function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type?: string; text?: unknown }) =>
      (part?.type === "input_text" || part?.type === "output_text") && typeof part.text === "string" ? part.text : "",
    )
    .join("");
}

const isMessage = (item: InputItem) => item.type === "message" || (item.type === undefined && typeof item.role === "string");
const isToolOutput = (item: InputItem) => item.type === "function_call_output" || item.type === "custom_tool_call_output";

function parse(body: unknown, path: string): ModelRequest {
  const request = body as { model?: unknown; input?: unknown; tools?: unknown; stream?: unknown };
  if (typeof request !== "object" || request === null || (typeof request.input !== "string" && !Array.isArray(request.input))) {
    throw new Error("openai-responses: the body has no `input` (a string or an array of items)");
  }
  const input: InputItem[] = typeof request.input === "string" ? [{ type: "message", role: "user", content: request.input }] : request.input;
  // Codex sends its environment context as a user message before the prompt; the prompt is the last one.
  const lastUser = input.findLast((item) => isMessage(item) && item.role === "user");
  return {
    path,
    format: "openai-responses",
    model: typeof request.model === "string" ? request.model : "",
    hasTools: Array.isArray(request.tools) && request.tools.length > 0,
    stream: request.stream === true,
    lastUserText: lastUser ? partsText(lastUser.content) : "",
    toolResults: input
      .filter(isToolOutput)
      .map((item) => ({ callId: typeof item.call_id === "string" ? item.call_id : "", output: partsText(item.output) })),
    raw: body,
  };
}

/** The names of the freeform (`custom`) tools the request offers. */
function customTools(request: ModelRequest): Set<string> {
  const tools = (request.raw as { tools?: Array<{ type?: string; name?: string }> }).tools ?? [];
  return new Set(tools.filter((tool) => tool.type === "custom" && typeof tool.name === "string").map((tool) => tool.name!));
}

const shortId = () => randomUUID().replaceAll("-", "").slice(0, 24);

type OutputItem = Record<string, unknown> & { id: string; type: string };

function messageItem(text: string): OutputItem {
  return {
    id: `msg_${shortId()}`,
    type: "message",
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [] }],
  };
}

function toolCallItems(turn: ModelTurn, request: ModelRequest): OutputItem[] {
  const custom = customTools(request);
  return (turn.toolCalls ?? []).map((call) => {
    const callId = `call_${shortId()}`;
    if (custom.has(call.name)) {
      const text = call.input.input;
      if (typeof text !== "string") throw new Error(`openai-responses: ${call.name} is a freeform tool; its step needs \`input.input\` as a string`);
      return { id: `ctc_${shortId()}`, type: "custom_tool_call", status: "completed", call_id: callId, name: call.name, input: text };
    }
    return {
      id: `fc_${shortId()}`,
      type: "function_call",
      status: "completed",
      call_id: callId,
      name: call.name,
      arguments: JSON.stringify(call.input),
    };
  });
}

const usage = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 15,
};

async function respond(turn: ModelTurn, request: ModelRequest, res: ServerResponse): Promise<void> {
  const calls = toolCallItems(turn, request);
  const response = { id: `resp_${shortId()}`, object: "response", created_at: Math.floor(Date.now() / 1000), model: request.model };
  if (!request.stream) {
    if (!(await waitForHold(res, turn.hold))) return;
    const text = `${turn.text ?? ""}${turn.after ?? ""}`;
    sendJson(res, 200, { ...response, status: "completed", output: [...(text ? [messageItem(text)] : []), ...calls], usage });
    return;
  }
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => sendEvent(res, { type, sequence_number: sequence++, ...data }, type);
  const output: OutputItem[] = [];
  const added = (item: OutputItem) => event("response.output_item.added", { output_index: output.length, item: { ...item, status: "in_progress" } });
  const done = (item: OutputItem) => {
    event("response.output_item.done", { output_index: output.length, item });
    output.push(item);
  };

  startEventStream(res);
  event("response.created", { response: { ...response, status: "in_progress", output: [] } });
  event("response.in_progress", { response: { ...response, status: "in_progress", output: [] } });
  // The message item stays open across the hold, so text before and after it is one message.
  const text = `${turn.text ?? ""}${turn.after ?? ""}`;
  const message = text ? messageItem(text) : undefined;
  if (message) {
    const at = { item_id: message.id, output_index: output.length, content_index: 0 };
    added({ ...message, content: [] });
    event("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } });
    if (turn.text) event("response.output_text.delta", { ...at, delta: turn.text });
    if (!(await waitForHold(res, turn.hold))) return;
    if (turn.after) event("response.output_text.delta", { ...at, delta: turn.after });
    event("response.output_text.done", { ...at, text });
    event("response.content_part.done", { ...at, part: { type: "output_text", text, annotations: [] } });
    done(message);
  } else if (!(await waitForHold(res, turn.hold))) return;
  for (const call of calls) {
    const at = { item_id: call.id, output_index: output.length };
    if (call.type === "custom_tool_call") {
      added({ ...call, input: "" });
      event("response.custom_tool_call_input.delta", { ...at, delta: call.input });
      event("response.custom_tool_call_input.done", { ...at, input: call.input });
    } else {
      added({ ...call, arguments: "" });
      event("response.function_call_arguments.delta", { ...at, delta: call.arguments });
      event("response.function_call_arguments.done", { ...at, arguments: call.arguments });
    }
    done(call);
  }
  event("response.completed", { response: { ...response, status: "completed", output, usage } });
  res.end();
}

export const format: WireFormat = { parse, respond };
