import { PassThrough } from "node:stream";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { divertSessionUpdates } from "../../src/agents/session-update-fast-path.js";

const line = (message: object) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;
const update = (text: string) => ({
  method: "session/update",
  params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
});

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
  return text;
}

describe("the session/update fast path", () => {
  it("takes updates out in order, even split across chunks, passes every other line on unchanged, and tells its requests and responses in order", async () => {
    const stdout = new PassThrough();
    const updates: SessionNotification[] = [];
    const refused: string[] = [];
    const passing: string[] = [];
    const rest = divertSessionUpdates(stdout, {
      onUpdate: (n) => void updates.push(n),
      onResponse: (id) => void passing.push(`response ${id}`),
      onRequest: (id, method) => void passing.push(`request ${id} ${method}`),
      onRefused: (reason) => void refused.push(reason),
    });
    const response = line({ id: 1, result: { stopReason: "end_turn" } });
    const request = line({ id: 7, method: "session/request_permission", params: { sessionId: "s" } });
    const all = [
      line(update("a")),
      request,
      line(update("b")),
      "not json\n",
      line({ id: 9, method: "session/update", params: {} }),
      line({ method: "session/update", params: { update: {} } }),
      response,
    ].join("");
    stdout.write(all.slice(0, 50));
    stdout.write(all.slice(50, 170));
    stdout.end(all.slice(170));
    const passed = await readAll(rest);
    expect(updates.map((n) => (n.update as { content: { text: string } }).content.text)).toEqual(["a", "b"]);
    expect(refused).toEqual(["session/update without a sessionId and an update kind"]);
    expect(passed).toBe([request, "not json\n", line({ id: 9, method: "session/update", params: {} }), response].join(""));
    expect(passing).toEqual(["request 7 session/request_permission", "request 9 session/update", "response 1"]);
  });

  it("refuses a line longer than the limit without buffering it, and carries on with the next", async () => {
    const stdout = new PassThrough();
    const updates: SessionNotification[] = [];
    const refused: string[] = [];
    const rest = divertSessionUpdates(
      stdout,
      { onUpdate: (n) => void updates.push(n), onResponse: () => undefined, onRequest: () => undefined, onRefused: (r) => void refused.push(r) },
      300,
    );
    for (let i = 0; i < 50; i++) stdout.write("x".repeat(40));
    stdout.write("\n");
    stdout.end(line(update("after")));
    expect(await readAll(rest)).toBe("");
    expect(refused).toEqual(["a message longer than 300 characters"]);
    expect(updates).toHaveLength(1);
  });

  it("drops what arrives after the SDK let go of the stream, without throwing", async () => {
    const stdout = new PassThrough();
    const rest = divertSessionUpdates(stdout, {
      onUpdate: () => undefined,
      onResponse: () => undefined,
      onRequest: () => undefined,
      onRefused: () => undefined,
    });
    await rest.cancel();
    // 'data' is emitted inside write(): a throwing listener would surface right here.
    expect(() => stdout.write(line({ id: 1, result: {} }))).not.toThrow();
    expect(() => stdout.end("{}\n")).not.toThrow();
  });
});
