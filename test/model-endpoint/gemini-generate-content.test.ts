import { describe, expect, it } from "vitest";
import { gate, scriptedTurns } from "../support/model-endpoint/script.js";
import type { ModelEndpoint } from "../support/model-endpoint/server.js";
import { endpointStarter, goAwayDuringHold, readServerSentEvents } from "./endpoint-client.js";

/**
 * The scripted model endpoint itself, over real HTTP on loopback: the Gemini API's generateContent
 * as Gemini CLI reads it (`GOOGLE_GEMINI_BASE_URL`), streamed (`:streamGenerateContent?alt=sse`)
 * and not (`:generateContent`).
 */

const start = endpointStarter();

const tools = [
  { functionDeclarations: [{ name: "run_shell_command", parametersJsonSchema: { type: "object", properties: { command: { type: "string" } } } }] },
];

function generate(
  endpoint: ModelEndpoint,
  body: Record<string, unknown>,
  options: { stream?: boolean; model?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  const method = options.stream === false ? "generateContent" : "streamGenerateContent?alt=sse";
  return fetch(`${endpoint.url}/v1beta/models/${options.model ?? "my-model"}:${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "x" },
    body: JSON.stringify(body),
    signal: options.signal,
  });
}

const userText = (...texts: string[]) => ({ role: "user", parts: texts.map((text) => ({ text })) });

type Chunk = {
  candidates: {
    content: { role: string; parts: { text?: string; functionCall?: { id: string; name: string; args: unknown } }[] };
    finishReason?: string;
  }[];
  usageMetadata?: unknown;
  modelVersion: string;
};
const chunks = async (response: Response, onChunk: (chunk: Chunk) => void = () => undefined): Promise<Chunk[]> => {
  const parse = (data: string) => JSON.parse(data) as Chunk;
  return (await readServerSentEvents(response, (event) => onChunk(parse(event.data)))).map((event) => parse(event.data));
};
const parts = (all: Chunk[]) => all.flatMap((c) => c.candidates[0]!.content.parts);
const text = (all: Chunk[]) =>
  parts(all)
    .map((p) => p.text ?? "")
    .join("");

describe("scripted model endpoint: Gemini generateContent", () => {
  it("streams text chunks, then the function calls in the last chunk, which carries finishReason STOP and the usage", async () => {
    const endpoint = await start(scriptedTurns([{ text: "Running it.", toolCalls: [{ name: "run_shell_command", input: { command: "echo hi" } }] }]));
    const response = await generate(endpoint, { contents: [userText("<session_context>…</session_context>", "run echo")], tools });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const all = await chunks(response);

    expect(all).toHaveLength(2);
    expect(all.every((c) => c.candidates[0]!.content.role === "model" && c.modelVersion === "my-model")).toBe(true);
    expect(text(all)).toBe("Running it.");
    expect(all[0]!.candidates[0]!.finishReason).toBeUndefined();
    const last = all[1]!;
    expect(last.candidates[0]!.finishReason).toBe("STOP");
    expect(last.usageMetadata).toEqual({ promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 });
    const call = last.candidates[0]!.content.parts[0]!.functionCall!;
    expect(call).toMatchObject({ name: "run_shell_command", args: { command: "echo hi" } });
    expect(call.id).toMatch(/^call_/);

    expect(endpoint.requests[0]).toMatchObject({
      format: "gemini-generate-content",
      path: "/v1beta/models/my-model:streamGenerateContent?alt=sse",
      model: "my-model",
      hasTools: true,
      stream: true,
      lastUserText: "run echo",
      toolResults: [],
    });
  });

  it("a request without function declarations is auxiliary: it gets the title, in one JSON body when not streamed", async () => {
    const endpoint = await start(scriptedTurns([]));
    const response = await generate(
      endpoint,
      { contents: [userText("classify this")], tools: [{ functionDeclarations: [] }] },
      { stream: false, model: "router" },
    );
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = (await response.json()) as Chunk;
    expect(body.candidates[0]).toMatchObject({ content: { role: "model", parts: [{ text: "Title" }] }, finishReason: "STOP" });
    expect(endpoint.requests[0]).toMatchObject({ model: "router", hasTools: false, stream: false, lastUserText: "classify this" });
  });

  it("reads the function responses out of the next request, and the prompt past them", async () => {
    const endpoint = await start(scriptedTurns([{ text: "All done." }]));
    const all = await chunks(
      await generate(endpoint, {
        tools,
        contents: [
          userText("write out.txt"),
          { role: "model", parts: [{ text: "thinking", thought: true }, { functionCall: { id: "call_1", name: "run_shell_command", args: {} } }] },
          {
            role: "user",
            parts: [
              { functionResponse: { id: "call_1", name: "run_shell_command", response: { output: "Output: hello" } } },
              { functionResponse: { name: "write_file", response: { error: "no such directory" } } },
            ],
          },
        ],
      }),
    );
    expect(text(all)).toBe("All done.");
    expect(endpoint.requests[0]!.lastUserText).toBe("write out.txt");
    expect(endpoint.requests[0]!.toolResults).toEqual([
      { callId: "call_1", output: "Output: hello" },
      { callId: "write_file", output: '{"error":"no such directory"}' },
    ]);
  });

  it("holds the answer open until the hold resolves, then streams the rest", async () => {
    const held = gate();
    const endpoint = await start(scriptedTurns([{ text: "before", hold: held.opened, after: " after" }]));
    let opened = false;
    const seenWhileClosed: Chunk[] = [];
    const all = await chunks(await generate(endpoint, { contents: [userText("go")], tools }), (chunk) => {
      if (!opened) seenWhileClosed.push(chunk);
      if (text([chunk]) === "before") {
        setTimeout(() => {
          opened = true;
          held.open();
        }, 200);
      }
    });
    expect(text(seenWhileClosed)).toBe("before");
    expect(seenWhileClosed.some((c) => c.candidates[0]!.finishReason)).toBe(false);
    expect(text(all)).toBe("before after");
    expect(all.at(-1)!.candidates[0]!.finishReason).toBe("STOP");
  });

  it("a client that goes away during a hold ends the response without an error", async () => {
    const held = gate();
    const endpoint = await start(scriptedTurns([{ text: "waiting", hold: held.opened }]));
    await goAwayDuringHold(endpoint, (signal) => generate(endpoint, { contents: [userText("go")], tools }, { signal }), held.open);
  });

  it("answers 400 for a body without contents; a path of another API method is not routed", async () => {
    const endpoint = await start(scriptedTurns([]));
    const bad = await generate(endpoint, { messages: [] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain(
      "gemini-generate-content: the body has no `contents` array",
    );
    const counted = await fetch(`${endpoint.url}/v1beta/models/my-model:countTokens`, { method: "POST", body: "{}" });
    expect(counted.status).toBe(404);
    expect(endpoint.unrouted).toEqual(["POST /v1beta/models/my-model:countTokens"]);
  });
});
