import { describe, expect, it } from "vitest";
import { gate, scriptedTurns } from "../support/model-endpoint/script.js";
import type { ModelEndpoint } from "../support/model-endpoint/server.js";
import { endpointStarter, goAwayDuringHold, readServerSentEvents } from "./endpoint-client.js";

/**
 * The scripted model endpoint itself, over real HTTP on loopback: the OpenAI Chat Completions format
 * as opencode's provider (and Ollama / vLLM / llama.cpp clients) read it, streamed and not.
 */

const start = endpointStarter();

const tools = [{ type: "function", function: { name: "bash", parameters: { type: "object", properties: { command: { type: "string" } } } } }];

function chat(endpoint: ModelEndpoint, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${endpoint.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fake-model", ...body }),
    signal,
  });
}

/** Reads an SSE body event by event, calling `onEvent` with each `data:` payload as it arrives. */
async function readEvents(response: Response, onEvent: (data: string) => void = () => undefined): Promise<string[]> {
  return (await readServerSentEvents(response, (event) => onEvent(event.data))).map((event) => event.data);
}

type Chunk = {
  object: string;
  choices: {
    delta: { content?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] };
    finish_reason: string | null;
  }[];
  usage?: unknown;
};
const chunks = (events: string[]): Chunk[] => events.filter((e) => e !== "[DONE]").map((e) => JSON.parse(e) as Chunk);
const text = (events: string[]) =>
  chunks(events)
    .map((c) => c.choices[0]?.delta.content ?? "")
    .join("");

describe("scripted model endpoint: OpenAI Chat Completions", () => {
  it("answers HEAD / and GET / with 200; an unknown path with 404, recorded", async () => {
    const endpoint = await start(scriptedTurns([]));
    expect((await fetch(`${endpoint.url}/`, { method: "HEAD" })).status).toBe(200);
    expect((await fetch(`${endpoint.url}/`)).status).toBe(200);
    const missing = await fetch(`${endpoint.url}/v1/models?x=1`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain("/v1/models");
    expect(endpoint.unrouted).toEqual(["GET /v1/models?x=1"]);
    expect(endpoint.requests).toEqual([]);
  });

  it("streams text, then tool calls with a tool_calls stop, then [DONE]; an auxiliary request (no tools) gets the title", async () => {
    const endpoint = await start(
      scriptedTurns([{ text: "Running it.", toolCalls: [{ name: "bash", input: { command: "echo hi", description: "say hi" } }] }]),
    );

    const title = await readEvents(await chat(endpoint, { stream: true, messages: [{ role: "user", content: "make a title" }] }));
    expect(text(title)).toBe("Title");
    expect(title.at(-1)).toBe("[DONE]");
    expect(chunks(title).at(-1)?.choices[0]?.finish_reason).toBe("stop");

    const response = await chat(endpoint, {
      stream: true,
      tools,
      messages: [
        { role: "system", content: "be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "run " },
            { type: "text", text: "echo" },
          ],
        },
      ],
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = await readEvents(response);
    expect(events.at(-1)).toBe("[DONE]");
    const all = chunks(events);
    expect(all.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(text(events)).toBe("Running it.");
    const calls = all.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.id).toMatch(/^call_/);
    expect(calls[0]!.function.name).toBe("bash");
    expect(JSON.parse(calls[0]!.function.arguments)).toEqual({ command: "echo hi", description: "say hi" });
    expect(all.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
    expect(all.at(-1)?.usage).toBeDefined();

    expect(endpoint.requests.map((r) => ({ format: r.format, path: r.path, hasTools: r.hasTools, stream: r.stream, last: r.lastUserText }))).toEqual([
      { format: "openai-chat", path: "/v1/chat/completions", hasTools: false, stream: true, last: "make a title" },
      { format: "openai-chat", path: "/v1/chat/completions", hasTools: true, stream: true, last: "run echo" },
    ]);
    expect(endpoint.requests[1]!.model).toBe("fake-model");
  });

  it("records the tool results the agent sends back", async () => {
    const endpoint = await start(scriptedTurns([{ text: "done" }]));
    const events = await readEvents(
      await chat(endpoint, {
        stream: true,
        tools,
        messages: [
          { role: "user", content: "run it" },
          { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "call_1", content: "hi\n" },
          { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "second" }] },
        ],
      }),
    );
    expect(text(events)).toBe("done");
    expect(endpoint.requests[0]!.toolResults).toEqual([
      { callId: "call_1", output: "hi\n" },
      { callId: "call_2", output: "second" },
    ]);
    expect(endpoint.requests[0]!.lastUserText).toBe("run it");
  });

  it("holds the response open until the hold resolves, then streams the rest", async () => {
    const held = gate();
    const endpoint = await start(
      scriptedTurns([{ text: "before", hold: held.opened, after: " after", toolCalls: [{ name: "bash", input: { command: "true" } }] }]),
    );
    let opened = false;
    const seenWhileClosed: string[] = [];
    const events = await readEvents(await chat(endpoint, { stream: true, tools, messages: [{ role: "user", content: "go" }] }), (data) => {
      if (!opened) seenWhileClosed.push(data);
      if (data.includes("before")) {
        setTimeout(() => {
          opened = true;
          held.open();
        }, 200);
      }
    });
    // Nothing after the text came before the gate opened; all of it came after.
    expect(text(seenWhileClosed)).toBe("before");
    expect(text(events)).toBe("before after");
    expect(chunks(events).some((c) => c.choices[0]?.delta.tool_calls)).toBe(true);
    expect(events.at(-1)).toBe("[DONE]");
  });

  it("a client that goes away during a hold ends the response without an error", async () => {
    const held = gate();
    const endpoint = await start(scriptedTurns([{ text: "waiting", hold: held.opened }]));
    await goAwayDuringHold(
      endpoint,
      (signal) => chat(endpoint, { stream: true, tools, messages: [{ role: "user", content: "go" }] }, signal),
      held.open,
    );
  });

  it("answers one JSON body when the request does not stream", async () => {
    const endpoint = await start(scriptedTurns([{ text: "plain", toolCalls: [{ name: "write", input: { filePath: "/tmp/x", content: "y" } }] }]));
    const response = await chat(endpoint, { tools, messages: [{ role: "user", content: "go" }] });
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = (await response.json()) as {
      object: string;
      choices: { message: { content: string; tool_calls: { function: { name: string; arguments: string } }[] }; finish_reason: string }[];
    };
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]!.message.content).toBe("plain");
    expect(body.choices[0]!.message.tool_calls[0]!.function).toEqual({
      name: "write",
      arguments: JSON.stringify({ filePath: "/tmp/x", content: "y" }),
    });
    expect(body.choices[0]!.finish_reason).toBe("tool_calls");
    expect(endpoint.requests[0]!.stream).toBe(false);
  });

  it("answers 400 and records the error for a body it cannot read and for a request beyond the script", async () => {
    const endpoint = await start(scriptedTurns([]));
    const bad = await fetch(`${endpoint.url}/v1/chat/completions`, { method: "POST", body: "{not json" });
    expect(bad.status).toBe(400);
    const noMessages = await chat(endpoint, { prompt: "old style" });
    expect(noMessages.status).toBe(400);
    const beyond = await chat(endpoint, { stream: true, tools, messages: [{ role: "user", content: "one too many" }] });
    expect(beyond.status).toBe(400);
    expect(((await beyond.json()) as { error: { message: string } }).error.message).toContain("the script has 0 turn(s)");
    expect(endpoint.errors).toHaveLength(3);
    expect(endpoint.errors[1]).toContain("no `messages` array");
    // The request beyond the script was still recorded, so a test sees what the agent asked.
    expect(endpoint.requests.map((r) => r.lastUserText)).toEqual(["one too many"]);
  });
});
