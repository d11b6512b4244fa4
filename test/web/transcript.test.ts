import { describe, expect, it } from "vitest";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { appendPrompt, appendStop, applyUpdate, type Transcript } from "../../web/src/chat/transcript.js";

const replay = (updates: SessionUpdate[], from: Transcript = []): Transcript => updates.reduce(applyUpdate, from);
const agentChunk = (text: string, messageId: string | null = "m1"): SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  messageId,
  content: { type: "text", text },
});

describe("transcript", () => {
  it("merges streamed chunks of one message and starts a new one for the next message or speaker", () => {
    const transcript = replay([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi " } },
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "there" } },
      agentChunk("Hel"),
      agentChunk("lo"),
      agentChunk("Again", "m2"),
      { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } },
    ]);
    expect(transcript).toEqual([
      { kind: "message", role: "user", messageId: null, text: "hi there", notice: false },
      { kind: "message", role: "agent", messageId: "m1", text: "Hello", notice: false },
      { kind: "message", role: "agent", messageId: "m2", text: "Again", notice: false },
      { kind: "message", role: "thought", messageId: null, text: "hmm", notice: false },
    ]);
  });

  it("keeps Berth's own notices apart from the agent's text", () => {
    const transcript = replay([
      agentChunk("working"),
      { ...agentChunk(" Berth interrupted this turn (reason: inactivity)"), _meta: { "berth/notice": { reason: "inactivity" } } },
    ]);
    expect(transcript.map((e) => e.kind === "message" && e.notice)).toEqual([false, true]);
  });

  it("updates a tool call in place: status, and content replaced as ACP says", () => {
    const transcript = replay([
      {
        sessionUpdate: "tool_call",
        toolCallId: "t1",
        title: "make test",
        kind: "execute",
        status: "in_progress",
        content: [{ type: "terminal", terminalId: "term-1" }],
      },
      agentChunk("meanwhile"),
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "ok" } }],
        rawOutput: { exitCode: 0 },
      },
    ]);
    expect(transcript).toHaveLength(2);
    expect(transcript[0]).toEqual({
      kind: "tool",
      call: {
        toolCallId: "t1",
        title: "make test",
        toolKind: "execute",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "ok" } }],
        rawOutput: { exitCode: 0 },
      },
    });
  });

  it("shows an update of an unknown tool call as a tool call of its own", () => {
    const [entry] = replay([{ sessionUpdate: "tool_call_update", toolCallId: "late", status: "failed" }]);
    expect(entry).toMatchObject({ kind: "tool", call: { toolCallId: "late", title: "tool call", status: "failed", content: [] } });
  });

  it("replaces a plan that is still the last entry, and ignores updates with nothing to show", () => {
    const transcript = replay([
      { sessionUpdate: "plan", entries: [{ content: "a", priority: "high", status: "pending" }] },
      { sessionUpdate: "plan", entries: [{ content: "a", priority: "high", status: "completed" }] },
      { sessionUpdate: "available_commands_update", availableCommands: [] },
    ]);
    expect(transcript).toEqual([{ kind: "plan", entries: [{ content: "a", priority: "high", status: "completed" }] }]);
  });

  it("adds the page's own prompts and how a turn stopped", () => {
    const transcript = appendStop(appendPrompt([], "/sleep 1h"), "cancelled");
    expect(transcript).toEqual([
      { kind: "message", role: "user", messageId: null, text: "/sleep 1h", notice: false },
      { kind: "stop", outcome: "cancelled" },
    ]);
  });
});
