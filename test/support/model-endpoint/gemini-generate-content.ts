import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { ModelRequest, ModelTurn, WireFormat } from "./script.js";
import { sendEvent, sendJson, startEventStream, waitForHold } from "./sse.js";

/**
 * Google's Gemini API (`POST /v1beta/models/MODEL:generateContent`, and
 * `:streamGenerateContent?alt=sse` streamed), as Gemini CLI speaks it with `GOOGLE_GEMINI_BASE_URL`:
 * the model is in the path; a reply is `candidates[0].content.parts` (text, `functionCall`), streamed
 * as unnamed `data:` chunks, the last with `finishReason` and `usageMetadata`. Tool results come back
 * as `functionResponse` parts of a user content.
 */

interface Part {
  text?: unknown;
  thought?: unknown;
  functionResponse?: { id?: unknown; name?: unknown; response?: unknown };
}

interface Content {
  role?: string;
  parts?: Part[];
}

const textOf = (part: Part): string | undefined => (typeof part.text === "string" && part.thought !== true ? part.text : undefined);

/** A function response's output: Gemini CLI sends `{ output }` (or `{ error }`); anything else as JSON. */
function responseText(response: unknown): string {
  const { output } = (response ?? {}) as { output?: unknown };
  return typeof output === "string" ? output : JSON.stringify(response);
}

function parse(body: unknown, path: string): ModelRequest {
  const request = body as { contents?: unknown; tools?: unknown };
  if (typeof request !== "object" || request === null || !Array.isArray(request.contents)) {
    throw new Error("gemini-generate-content: the body has no `contents` array");
  }
  const model = /\/models\/([^/:]+):/.exec(path)?.[1] ?? "";
  const contents = request.contents as Content[];
  const userParts = contents.filter((c) => c.role === "user").map((c) => c.parts ?? []);
  // The prompt is the last text the user sent: a content of function responses only is not a prompt.
  const typed = userParts.findLast((parts) => parts.some((part) => textOf(part) !== undefined)) ?? [];
  const tools = Array.isArray(request.tools) ? (request.tools as Array<{ functionDeclarations?: unknown[] }>) : [];
  return {
    path,
    format: "gemini-generate-content",
    model,
    hasTools: tools.some((tool) => (tool.functionDeclarations ?? []).length > 0),
    stream: path.includes(":streamGenerateContent"),
    lastUserText: typed.map(textOf).findLast((text) => text !== undefined) ?? "",
    toolResults: userParts
      .flat()
      .filter((part) => part.functionResponse)
      .map(({ functionResponse }) => ({
        callId: String(functionResponse!.id ?? functionResponse!.name ?? ""),
        output: responseText(functionResponse!.response),
      })),
    raw: body,
  };
}

const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

function functionCalls(turn: ModelTurn) {
  return (turn.toolCalls ?? []).map((call) => ({
    functionCall: { id: `call_${randomUUID().replaceAll("-", "").slice(0, 24)}`, name: call.name, args: call.input },
  }));
}

async function respond(turn: ModelTurn, request: ModelRequest, res: ServerResponse): Promise<void> {
  const responseId = randomUUID();
  const calls = functionCalls(turn);
  const candidate = (parts: unknown[], finished: boolean) => ({
    content: { role: "model", parts },
    index: 0,
    ...(finished ? { finishReason: "STOP" } : {}),
  });
  const reply = (parts: unknown[], finished: boolean) => ({
    candidates: [candidate(parts, finished)],
    modelVersion: request.model,
    responseId,
    ...(finished ? { usageMetadata } : {}),
  });
  if (!request.stream) {
    if (!(await waitForHold(res, turn.hold))) return;
    const text = `${turn.text ?? ""}${turn.after ?? ""}`;
    sendJson(res, 200, reply([...(text ? [{ text }] : []), ...calls], true));
    return;
  }
  startEventStream(res);
  if (turn.text) sendEvent(res, reply([{ text: turn.text }], false));
  if (!(await waitForHold(res, turn.hold))) return;
  if (turn.after) sendEvent(res, reply([{ text: turn.after }], false));
  // Function calls, then the end of the answer: finishReason STOP ends a turn with calls too.
  sendEvent(res, reply(calls.length > 0 ? calls : [{ text: "" }], true));
  res.end();
}

export const format: WireFormat = { parse, respond };
