import { describe, expect, it } from "vitest";
import { gate, scriptedTurns } from "../support/model-endpoint/script.js";
import type { ModelEndpoint } from "../support/model-endpoint/server.js";
import { endpointStarter, goAwayDuringHold, readNamedEvents, type NamedEvent } from "./endpoint-client.js";

/**
 * The scripted model endpoint itself, over real HTTP on loopback: the OpenAI Responses format as
 * codex-acp reads it (a custom provider with `wire_api = "responses"`), streamed and not.
 */

const start = endpointStarter();

// As codex offers them: a JSON function and a freeform (grammar) tool.
const tools = [
  { type: "function", name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" } } } },
  { type: "custom", name: "apply_patch", format: { type: "grammar", syntax: "lark", definition: "start: ..." } },
];

function responses(endpoint: ModelEndpoint, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${endpoint.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-5.4", ...body }),
    signal,
  });
}

const userMessage = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const text = (events: NamedEvent[]) =>
  events
    .filter((e) => e.event === "response.output_text.delta")
    .map((e) => e.data.delta)
    .join("");
type Item = { id: string; type: string; status: string; call_id?: string; name?: string; arguments?: string; input?: string; content?: unknown };
const doneItems = (events: NamedEvent[]) => events.filter((e) => e.event === "response.output_item.done").map((e) => e.data.item as Item);

describe("scripted model endpoint: OpenAI Responses", () => {
  it("streams response.created, a message item, a function_call item, then response.completed with the whole output", async () => {
    const endpoint = await start(
      scriptedTurns([{ text: "Running it.", toolCalls: [{ name: "exec_command", input: { cmd: "echo hi", tty: false } }] }]),
    );
    const response = await responses(endpoint, {
      stream: true,
      tools,
      input: [userMessage("<environment_context>…</environment_context>"), userMessage("run echo")],
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = await readNamedEvents(response);

    expect(events.every((e) => e.event === e.data.type)).toBe(true);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(text(events)).toBe("Running it.");
    const [message, call] = doneItems(events);
    expect(message).toMatchObject({
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Running it." }],
    });
    expect(call).toMatchObject({ type: "function_call", status: "completed", name: "exec_command" });
    expect(call!.call_id).toMatch(/^call_/);
    expect(JSON.parse(call!.arguments!)).toEqual({ cmd: "echo hi", tty: false });
    // Items are announced in progress, at their output index, under the id they end with.
    const added = events.filter((e) => e.event === "response.output_item.added");
    expect(added.map((e) => [e.data.output_index, (e.data.item as Item).id, (e.data.item as Item).status])).toEqual([
      [0, message!.id, "in_progress"],
      [1, call!.id, "in_progress"],
    ]);
    const completed = events.at(-1)!.data.response as { id: string; status: string; output: Item[]; usage: unknown };
    expect(completed.status).toBe("completed");
    expect(completed.id).toBe((events[0]!.data.response as { id: string }).id);
    expect(completed.output).toEqual([message, call]);
    expect(completed.usage).toMatchObject({ input_tokens: 10, output_tokens: 5, total_tokens: 15 });

    expect(endpoint.requests[0]).toMatchObject({
      format: "openai-responses",
      path: "/v1/responses",
      model: "gpt-5.4",
      hasTools: true,
      stream: true,
      lastUserText: "run echo",
      toolResults: [],
    });
  });

  it("a call to a freeform tool is a custom_tool_call item carrying the step's input text", async () => {
    const patch = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n";
    const endpoint = await start(scriptedTurns([{ toolCalls: [{ name: "apply_patch", input: { input: patch } }] }]));
    const events = await readNamedEvents(await responses(endpoint, { stream: true, tools, input: [userMessage("patch it")] }));
    expect(events.map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events[3]!.data.delta).toBe(patch);
    expect(doneItems(events)).toMatchObject([{ type: "custom_tool_call", name: "apply_patch", input: patch, status: "completed" }]);
  });

  it("a freeform tool step without an input text is refused with a 400 naming the tool", async () => {
    const endpoint = await start(scriptedTurns([{ toolCalls: [{ name: "apply_patch", input: { patch: "x" } }] }]));
    const response = await responses(endpoint, { stream: true, tools, input: [userMessage("patch it")] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain("apply_patch is a freeform tool");
    expect(endpoint.errors).toHaveLength(1);
  });

  it("reads the tool results, function and freeform, out of the next request", async () => {
    const endpoint = await start(scriptedTurns([{ text: "All done." }]));
    const events = await readNamedEvents(
      await responses(endpoint, {
        stream: true,
        tools,
        input: [
          { type: "message", role: "developer", content: [{ type: "input_text", text: "<permissions instructions>" }] },
          userMessage("write out.txt"),
          { type: "message", role: "assistant", content: [{ type: "output_text", text: "Running it." }] },
          { type: "function_call", name: "exec_command", arguments: '{"cmd":"echo hello"}', call_id: "call_1" },
          { type: "function_call_output", call_id: "call_1", output: "Process exited with code 0\nOutput:\nhello\n" },
          { type: "custom_tool_call", name: "apply_patch", input: "*** Begin Patch", call_id: "call_2" },
          { type: "custom_tool_call_output", call_id: "call_2", output: [{ type: "input_text", text: "Success." }] },
        ],
      }),
    );
    expect(text(events)).toBe("All done.");
    expect(endpoint.requests[0]!.lastUserText).toBe("write out.txt");
    expect(endpoint.requests[0]!.toolResults).toEqual([
      { callId: "call_1", output: "Process exited with code 0\nOutput:\nhello\n" },
      { callId: "call_2", output: "Success." },
    ]);
  });

  it("an auxiliary request (no tools, input as a string) gets the title", async () => {
    const endpoint = await start(scriptedTurns([]));
    const events = await readNamedEvents(await responses(endpoint, { stream: true, input: "name this thread" }));
    expect(text(events)).toBe("Title");
    expect(endpoint.requests[0]).toMatchObject({ hasTools: false, lastUserText: "name this thread" });
  });

  it("holds the message item open until the hold resolves, then streams the rest", async () => {
    const held = gate();
    const endpoint = await start(scriptedTurns([{ text: "before", hold: held.opened, after: " after" }]));
    let opened = false;
    const seenWhileClosed: NamedEvent[] = [];
    const events = await readNamedEvents(await responses(endpoint, { stream: true, tools, input: [userMessage("go")] }), (event) => {
      if (!opened) seenWhileClosed.push(event);
      if (event.event === "response.output_text.delta") {
        setTimeout(() => {
          opened = true;
          held.open();
        }, 200);
      }
    });
    expect(seenWhileClosed.at(-1)!.event).toBe("response.output_text.delta");
    expect(text(seenWhileClosed)).toBe("before");
    expect(text(events)).toBe("before after");
    expect(doneItems(events)).toMatchObject([{ type: "message", content: [{ text: "before after" }] }]);
    expect(events.at(-1)!.event).toBe("response.completed");
  });

  it("a client that goes away during a hold ends the response without an error", async () => {
    const held = gate();
    const endpoint = await start(scriptedTurns([{ text: "waiting", hold: held.opened }]));
    await goAwayDuringHold(endpoint, (signal) => responses(endpoint, { stream: true, tools, input: [userMessage("go")] }, signal), held.open);
  });

  it("answers one JSON response when the request does not stream", async () => {
    const endpoint = await start(scriptedTurns([{ text: "plain", toolCalls: [{ name: "exec_command", input: { cmd: "true" } }] }]));
    const response = await responses(endpoint, { tools, input: [userMessage("go")] });
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = (await response.json()) as { object: string; status: string; output: Item[] };
    expect(body).toMatchObject({ object: "response", status: "completed" });
    expect(body.output).toMatchObject([
      { type: "message", content: [{ type: "output_text", text: "plain" }] },
      { type: "function_call", name: "exec_command", arguments: '{"cmd":"true"}' },
    ]);
  });

  it("answers 400 with the reason for a body without input", async () => {
    const endpoint = await start(scriptedTurns([]));
    const response = await responses(endpoint, { messages: [{ role: "user", content: "wrong format" }] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain("openai-responses: the body has no `input`");
  });
});
