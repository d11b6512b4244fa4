import { describe, expect, it } from "vitest";
import { gate, scriptedTurns } from "../support/model-endpoint/script.js";
import type { ModelEndpoint } from "../support/model-endpoint/server.js";
import { endpointStarter, goAwayDuringHold, readNamedEvents, type NamedEvent } from "./endpoint-client.js";

/**
 * The scripted model endpoint itself, over real HTTP on loopback: the Anthropic Messages format as
 * claude-agent-acp (Claude Code) reads it, streamed and not.
 */

const start = endpointStarter();

const tools = [{ name: "Bash", description: "run", input_schema: { type: "object", properties: { command: { type: "string" } } } }];

function messages(endpoint: ModelEndpoint, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  // Claude Code calls the beta path.
  return fetch(`${endpoint.url}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "claude-sonnet-4-6", max_tokens: 100, ...body }),
    signal,
  });
}

type Delta = { type: string; text?: string; partial_json?: string; stop_reason?: string };
const deltas = (events: NamedEvent[]) => events.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta as Delta);
const text = (events: NamedEvent[]) =>
  deltas(events)
    .map((d) => d.text ?? "")
    .join("");

describe("scripted model endpoint: Anthropic Messages", () => {
  it("streams the full event sequence: a text block, then a tool_use block whose input arrives as JSON pieces, then the tool_use stop", async () => {
    const endpoint = await start(
      scriptedTurns([{ text: "Running it.", toolCalls: [{ name: "Bash", input: { command: "echo hi", description: "say hi" } }] }]),
    );
    const response = await messages(endpoint, { stream: true, tools, messages: [{ role: "user", content: "run echo" }] });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = await readNamedEvents(response);

    // Every event's name is its data's type.
    expect(events.every((e) => e.event === e.data.type)).toBe(true);
    expect(events.map((e) => e.event)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const opening = events[0]!.data.message as { id: string; role: string; model: string; content: unknown[] };
    expect(opening).toMatchObject({ role: "assistant", model: "claude-sonnet-4-6", content: [] });
    expect(opening.id).toMatch(/^msg_/);
    expect(events[2]!.data).toEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    expect(text(events)).toBe("Running it.");

    const toolStart = events[5]!.data as unknown as { index: number; content_block: { type: string; id: string; name: string; input: unknown } };
    expect(toolStart.index).toBe(1);
    expect(toolStart.content_block).toMatchObject({ type: "tool_use", name: "Bash", input: {} });
    expect(toolStart.content_block.id).toMatch(/^toolu_/);
    const json = deltas(events)
      .filter((d) => d.type === "input_json_delta")
      .map((d) => d.partial_json)
      .join("");
    expect(JSON.parse(json)).toEqual({ command: "echo hi", description: "say hi" });
    expect(events.filter((e) => e.event === "content_block_delta" && e.data.index === 1)).toHaveLength(2);
    expect(events[9]!.data.delta).toEqual({ stop_reason: "tool_use", stop_sequence: null });

    expect(endpoint.requests).toHaveLength(1);
    expect(endpoint.requests[0]).toMatchObject({
      format: "anthropic-messages",
      path: "/v1/messages?beta=true",
      model: "claude-sonnet-4-6",
      hasTools: true,
      stream: true,
      lastUserText: "run echo",
      toolResults: [],
    });
  });

  it("an auxiliary request (no tools) gets the title, ending with end_turn", async () => {
    const endpoint = await start(scriptedTurns([]));
    const events = await readNamedEvents(await messages(endpoint, { stream: true, messages: [{ role: "user", content: "title this" }] }));
    expect(text(events)).toBe("Title");
    expect(events.find((e) => e.event === "message_delta")!.data.delta).toEqual({ stop_reason: "end_turn", stop_sequence: null });
    expect(events.at(-1)!.event).toBe("message_stop");
  });

  it("reads the prompt past Claude Code's system reminders and the tool results out of the next request", async () => {
    const endpoint = await start(scriptedTurns([{ text: "All done." }]));
    const events = await readNamedEvents(
      await messages(endpoint, {
        stream: true,
        tools,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "<system-reminder>\nskills\n</system-reminder>\n" },
              { type: "text", text: "write out.txt", cache_control: { type: "ephemeral" } },
              { type: "text", text: "<system-reminder>\ndate\n</system-reminder>" },
            ],
          },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Running it." },
              { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "echo hello" } },
              { type: "tool_use", id: "toolu_2", name: "Bash", input: { command: "ls" } },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: "hello", is_error: false },
              { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "out.txt" }] },
              { type: "text", text: "<system-reminder>\nfiles changed\n</system-reminder>" },
            ],
          },
        ],
      }),
    );
    expect(text(events)).toBe("All done.");
    expect(endpoint.requests[0]!.lastUserText).toBe("write out.txt");
    expect(endpoint.requests[0]!.toolResults).toEqual([
      { callId: "toolu_1", output: "hello" },
      { callId: "toolu_2", output: "out.txt" },
    ]);
  });

  it("holds the text block open until the hold resolves, then streams the rest in the same block", async () => {
    const held = gate();
    const endpoint = await start(
      scriptedTurns([{ text: "before", hold: held.opened, after: " after", toolCalls: [{ name: "Bash", input: { command: "true" } }] }]),
    );
    let opened = false;
    const seenWhileClosed: NamedEvent[] = [];
    const events = await readNamedEvents(await messages(endpoint, { stream: true, tools, messages: [{ role: "user", content: "go" }] }), (event) => {
      if (!opened) seenWhileClosed.push(event);
      if (event.event === "content_block_delta") {
        setTimeout(() => {
          opened = true;
          held.open();
        }, 200);
      }
    });
    expect(seenWhileClosed.map((e) => e.event)).toEqual(["message_start", "ping", "content_block_start", "content_block_delta"]);
    expect(text(events)).toBe("before after");
    expect(deltas(events).filter((d) => d.type === "text_delta")).toHaveLength(2);
    expect(events.filter((e) => e.event === "content_block_start")).toHaveLength(2);
    expect(events.at(-1)!.event).toBe("message_stop");
  });

  it("a client that goes away during a hold ends the response without an error", async () => {
    const held = gate();
    const endpoint = await start(scriptedTurns([{ text: "waiting", hold: held.opened }]));
    await goAwayDuringHold(
      endpoint,
      (signal) => messages(endpoint, { stream: true, tools, messages: [{ role: "user", content: "go" }] }, signal),
      held.open,
    );
  });

  it("answers one JSON message when the request does not stream", async () => {
    const endpoint = await start(scriptedTurns([{ text: "plain", toolCalls: [{ name: "Write", input: { file_path: "/tmp/x", content: "y" } }] }]));
    const response = await messages(endpoint, { tools, messages: [{ role: "user", content: "go" }] });
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = (await response.json()) as { type: string; role: string; content: { type: string; id?: string }[]; stop_reason: string };
    expect(body).toMatchObject({ type: "message", role: "assistant", stop_reason: "tool_use" });
    expect(body.content).toMatchObject([
      { type: "text", text: "plain" },
      { type: "tool_use", name: "Write", input: { file_path: "/tmp/x", content: "y" } },
    ]);
    expect(body.content[1]!.id).toMatch(/^toolu_/);
    expect(endpoint.requests[0]!.stream).toBe(false);
  });

  it("answers 400 with the reason for a body without messages, and records it", async () => {
    const endpoint = await start(scriptedTurns([]));
    const response = await messages(endpoint, { prompt: "\n\nHuman: old style" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      "anthropic-messages: the body has no `messages` array",
    );
    expect(endpoint.errors).toHaveLength(1);
    expect(endpoint.requests).toEqual([]);
  });
});
