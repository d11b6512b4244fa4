import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { TerminalOutputResult } from "../../src/location/terminal.js";
import { TerminalMirror } from "../../src/server/terminal-mirror.js";

afterEach(() => {
  vi.useRealTimers();
});

const running = (output: string): TerminalOutputResult => ({ output, truncated: false, exitStatus: null });
const exited = (output: string): TerminalOutputResult => ({ output, truncated: false, exitStatus: { exitCode: 0 } });

function mirrorOf(terminals: Map<string, TerminalOutputResult>, outputLimit = 1024 * 1024) {
  const sent: SessionUpdate[] = [];
  const mirror = new TerminalMirror(
    (id) => terminals.get(id),
    (update) => sent.push(update),
    { shown: "as_text", outputLimit },
    500,
  );
  return { mirror, sent };
}

const toolCall: SessionUpdate = {
  sessionUpdate: "tool_call",
  toolCallId: "t1",
  title: "build",
  content: [{ type: "terminal", terminalId: "term-1" }],
};
const texts = (updates: SessionUpdate[]) =>
  updates.flatMap((u) =>
    "content" in u && Array.isArray(u.content)
      ? u.content.flatMap((c) => (c.type === "content" && c.content.type === "text" ? [c.content.text] : []))
      : [],
  );

describe("TerminalMirror", () => {
  it("shows a running command's output and sends it again as it grows, until it exits", () => {
    vi.useFakeTimers();
    const terminals = new Map([["term-1", running("one\n")]]);
    const { mirror, sent } = mirrorOf(terminals);
    expect(texts([mirror.rewrite(toolCall)])).toEqual(["```\none\n\n```"]);
    vi.advanceTimersByTime(500);
    expect(sent).toEqual([]); // unchanged output: nothing sent
    terminals.set("term-1", running("one\ntwo\n"));
    vi.advanceTimersByTime(500);
    expect(texts(sent)).toEqual(["```\none\ntwo\n\n```"]);
    terminals.set("term-1", exited("one\ntwo\n"));
    vi.advanceTimersByTime(500);
    expect(texts(sent).at(-1)).toBe("```\none\ntwo\n\n```\n(exit code 0)");
    const count = sent.length;
    vi.advanceTimersByTime(5_000);
    expect(sent).toHaveLength(count);
  });

  it("never replaces the agent's final output once it released the terminal", () => {
    vi.useFakeTimers();
    const terminals = new Map([["term-1", running("partial\n")]]);
    const { mirror, sent } = mirrorOf(terminals);
    mirror.rewrite(toolCall);
    const final: SessionUpdate = {
      sessionUpdate: "tool_call_update",
      toolCallId: "t1",
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: "all\n" } }],
    };
    expect(mirror.rewrite(final)).toBe(final);
    terminals.delete("term-1");
    vi.advanceTimersByTime(5_000);
    expect(sent).toEqual([]);
  });

  it("a terminal released while still followed keeps the text last shown", () => {
    vi.useFakeTimers();
    const terminals = new Map([["term-1", running("kept\n")]]);
    const { mirror, sent } = mirrorOf(terminals);
    mirror.rewrite(toolCall);
    terminals.delete("term-1");
    vi.advanceTimersByTime(5_000);
    expect(sent).toEqual([]);
    // Replayed later on this connection, the tool call still shows what was last seen.
    expect(texts([mirror.rewrite(toolCall)])).toEqual(["```\nkept\n\n```"]);
  });

  it("leaves updates without terminal content as they are", () => {
    const { mirror } = mirrorOf(new Map());
    const plain: SessionUpdate = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } };
    expect(mirror.rewrite(plain)).toBe(plain);
  });
});

describe("TerminalMirror, a terminal the agent embedded, shown as text", () => {
  const embeddedCall: SessionUpdate = {
    sessionUpdate: "tool_call",
    toolCallId: "c1",
    title: "build",
    content: [{ type: "terminal", terminalId: "agent-term" }],
    _meta: { terminal_info: { terminal_id: "agent-term" } },
  };
  const chunk = (data: string): SessionUpdate => ({
    sessionUpdate: "tool_call_update",
    toolCallId: "c1",
    _meta: { terminal_output: { terminal_id: "agent-term", data } },
  });
  const exit: SessionUpdate = {
    sessionUpdate: "tool_call_update",
    toolCallId: "c1",
    status: "completed",
    content: [{ type: "terminal", terminalId: "agent-term" }],
    _meta: { terminal_exit: { terminal_id: "agent-term", exit_code: 0, signal: null } },
  };

  it("sends its output again once per interval, not with every chunk", () => {
    vi.useFakeTimers();
    const { mirror, sent } = mirrorOf(new Map());
    const returned = [mirror.rewrite(embeddedCall)];
    for (let i = 0; i < 2000; i++) returned.push(mirror.rewrite(chunk("x")));
    // Only the tool call itself carries the terminal as text; the chunks go on without content.
    expect(texts(returned)).toEqual(["```\n\n```"]);
    vi.advanceTimersByTime(500);
    expect(texts(sent)).toEqual([`\`\`\`\n${"x".repeat(2000)}\n\`\`\``]);
    vi.advanceTimersByTime(500);
    expect(sent).toHaveLength(1); // no new output: nothing sent
    expect(texts([mirror.rewrite(exit)])).toEqual([`\`\`\`\n${"x".repeat(2000)}\n\`\`\`\n(exit code 0)`]);
    vi.advanceTimersByTime(5_000);
    expect(sent).toHaveLength(1);
  });

  it("keeps the tail of its output within terminalOutputLimit, marked as cut, from a whole character on", () => {
    const { mirror } = mirrorOf(new Map(), 8);
    mirror.rewrite(embeddedCall);
    mirror.rewrite(chunk("0123456789"));
    // "é" is two bytes: the eight-byte tail starts in its middle, so it is shown from the next character.
    mirror.rewrite(chunk("abcé1234567"));
    expect(texts([mirror.rewrite(exit)])).toEqual(["```\n…\n1234567\n```\n(exit code 0)"]);
    mirror.close();
  });
});
