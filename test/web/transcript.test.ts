import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { JournalEvent } from "../../src/host/views.js";
import { appendSegment, CUT_STEP, emptySegments, HARD_LIMIT, segmentsText } from "../../web/src/chat/message-segments.js";
import { Transcript, type MessageEntry } from "../../web/src/chat/transcript.js";

let seq = 0;
const event = (kind: string, payload: unknown): JournalEvent => ({ sessionId: "s", seq: ++seq, kind, payload: payload as never, at: 0 });
const update = (u: SessionUpdate, meta?: Record<string, unknown>): JournalEvent => event("update", meta ? { update: u, _meta: meta } : { update: u });
const agentChunk = (text: string, messageId: string | null = "m1"): SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  messageId,
  content: { type: "text", text },
});
const textOf = (entry: unknown): string => {
  const message = entry as MessageEntry;
  return message.segments.blocks.join("") + message.segments.tail;
};

function read(events: JournalEvent[]): Transcript {
  const transcript = new Transcript();
  for (const e of events) transcript.applyEvent(e);
  return transcript;
}

describe("transcript", () => {
  it("merges streamed chunks of one message and starts a new one for the next message or speaker", () => {
    const t = read([
      event("turn_started", { prompt: [{ type: "text", text: "hi there" }] }),
      update(agentChunk("Hel")),
      update(agentChunk("lo")),
      update(agentChunk("Again", "m2")),
      update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } }),
    ]);
    expect(t.entries.map((e) => [e.kind, (e as MessageEntry).role, textOf(e)])).toEqual([
      ["message", "user", "hi there"],
      ["message", "agent", "Hello"],
      ["message", "agent", "Again"],
      ["message", "thought", "hmm"],
    ]);
  });

  it("applies each journal event once, whichever way it came", () => {
    const t = new Transcript();
    const first = update(agentChunk("once"));
    expect(t.applyEvent(first)).toBe("applied");
    expect(t.applyEvent(first)).toBe("old");
    expect(t.entries).toHaveLength(1);
    expect(textOf(t.entries[0])).toBe("once");
    expect(t.lastSeq).toBe(first.seq);
  });

  it("never shows twice merged chunks of which a live update showed the first: it applies none of them and reads on", () => {
    const t = new Transcript();
    const chunk = (from: number, to: number, text: string) => ({ ...update(agentChunk(text)), seq: to, ...(from < to ? { seqFrom: from } : {}) });
    expect(t.applyEvent({ ...chunk(1, 100, "a".repeat(100)) })).toBe("applied");
    // Live: chunks 101 to 103, merged.
    expect(t.applyEvent(chunk(101, 103, "bcd"))).toBe("applied");
    // A page read from after=100, which started before that update came: 101 to 140 merged.
    const page = chunk(101, 140, `bcd${"e".repeat(37)}`);
    expect(t.applyEvent(page)).toBe("overlaps");
    expect(t.lastSeq).toBe(103);
    expect(textOf(t.entries[0])).toBe(`${"a".repeat(100)}bcd`);
    // Read on from what is shown (after=103): the rest, once.
    expect(t.applyEvent(chunk(104, 140, "e".repeat(37)))).toBe("applied");
    expect(t.applyEvent(page)).toBe("old");
    expect(textOf(t.entries[0])).toBe(`${"a".repeat(100)}bcd${"e".repeat(37)}`);
    expect(t.lastSeq).toBe(140);
  });

  it("reads a command's terminal while it runs, and once more after its tool call ended while it was last seen running", () => {
    const running = (id: string, status: string) =>
      update({
        sessionUpdate: "tool_call",
        toolCallId: id,
        title: id,
        status,
        content: [{ type: "terminal", terminalId: `term-${id}` }],
      } as SessionUpdate);
    // A finished tool call read from the journal, its output never read: nothing to read.
    const t = read([running("old", "completed"), running("now", "in_progress")]);
    expect(t.terminalsToRead()).toEqual(["term-now"]);
    t.showTerminal("term-now", { output: "one\n", truncated: false, exitStatus: null });
    // The agent ends the tool call and keeps the terminal in it: the last lines and the exit are still to read.
    t.applyEvent(update({ sessionUpdate: "tool_call_update", toolCallId: "now", status: "completed" }));
    expect(t.terminalsToRead()).toEqual(["term-now"]);
    const done = { output: "one\ntwo\n", truncated: false, exitStatus: { exitCode: 0, signal: null } };
    t.showTerminal("term-now", done);
    expect(t.terminalsToRead()).toEqual([]);
    const entry = t.entries.find((e) => e.kind === "tool" && e.call.toolCallId === "now") as { outputs: Map<string, unknown> };
    expect(entry.outputs.get("term-now")).toEqual(done);
  });

  it("shows nothing for a chunk the agent sent without a text block, and goes on", () => {
    const t = read([
      update(agentChunk("before ")),
      update({ sessionUpdate: "agent_message_chunk", content: null } as unknown as SessionUpdate),
      update({ sessionUpdate: "agent_message_chunk", content: { type: "text" } } as unknown as SessionUpdate),
      update(agentChunk("after")),
    ]);
    expect(t.entries.map(textOf)).toEqual(["before after"]);
    expect(t.lastSeq).toBe(seq);
  });

  it("keeps Berth's own notices apart from the agent's text", () => {
    const t = read([
      update(agentChunk("working")),
      update({ ...agentChunk(" Berth interrupted this turn"), _meta: { "berth/notice": { reason: "inactivity" } } }),
    ]);
    expect(t.entries.map((e) => (e as MessageEntry).notice)).toEqual([false, true]);
  });

  it("updates a tool call in place: status, and content replaced as ACP says", () => {
    const t = read([
      update({
        sessionUpdate: "tool_call",
        toolCallId: "t1",
        title: "make test",
        kind: "execute",
        status: "in_progress",
        content: [{ type: "terminal", terminalId: "term-1" }],
      }),
      update(agentChunk("meanwhile")),
      update({
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "ok" } }],
        rawOutput: { exitCode: 0 },
      }),
    ]);
    expect(t.entries).toHaveLength(2);
    expect(t.entries[0]).toMatchObject({
      kind: "tool",
      call: {
        toolCallId: "t1",
        title: "make test",
        toolKind: "execute",
        status: "completed",
        content: [{ type: "content" }],
        rawOutput: { exitCode: 0 },
      },
    });
  });

  it("keeps turn ends that were not a plain end, questions and their answers, as the journal has them", () => {
    seq = 0;
    const request = {
      toolCall: { title: "Deploy?" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "deny", name: "Deny", kind: "reject_once" },
      ],
    };
    const t = read([
      event("turn_started", { prompt: [{ type: "text", text: "/ask Deploy?" }] }),
      event("question_asked", { questionId: "q1", kind: "permission", request }),
      event("question_resolved", { questionId: "q1", state: "answered", answer: { optionId: "allow" } }),
      event("turn_ended", { stopReason: "end_turn", error: null }),
      event("turn_started", { prompt: [{ type: "text", text: "/sleep 1h" }] }),
      event("question_asked", { questionId: "q2", kind: "elicitation", request: { message: "Name?" } }),
      event("question_resolved", { questionId: "q2", state: "cancelled", reason: "user" }),
      event("turn_ended", { stopReason: "cancelled", error: null }),
      event("turn_started", { prompt: [{ type: "text", text: "boom" }] }),
      event("turn_ended", { stopReason: null, error: "the agent crashed" }),
    ]);
    const shown = t.entries.filter((e) => e.kind !== "message");
    expect(shown).toMatchObject([
      { kind: "question", question: { title: "Deploy?" }, resolution: { verb: "allowed", detail: "Allow" } },
      { kind: "question", question: { title: "Name?" }, resolution: { verb: "withdrawn", detail: "user" } },
      { kind: "turn-end", stopReason: "cancelled" },
      { kind: "turn-end", error: "the agent crashed" },
    ]);
    expect(t.turnRunning).toBe(false);
    expect(t.hasTurnFor("/sleep 1h", 0)).toBe(true);
    expect(t.hasTurnFor("/sleep 1h", 6)).toBe(false);
  });

  it("replaces a plan that is still the last entry, and ignores updates with nothing to show", () => {
    const t = read([
      update({ sessionUpdate: "plan", entries: [{ content: "a", priority: "high", status: "pending" }] }),
      update({ sessionUpdate: "plan", entries: [{ content: "a", priority: "high", status: "completed" }] }),
      update({ sessionUpdate: "available_commands_update", availableCommands: [] }),
    ]);
    expect(t.entries).toMatchObject([{ kind: "plan", entries: [{ content: "a", status: "completed" }] }]);
  });

  it("lays a long message out as rows of finished blocks and a growing tail", () => {
    const t = new Transcript();
    const chunks = Array.from({ length: 2_000 }, (_, i) => `paragraph ${i} ${"x".repeat(20)}\n\n`);
    for (const chunk of chunks) t.applyEvent(update(agentChunk(chunk)));
    const rows = t.rows();
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.every((row) => row.entry === t.entries[0])).toBe(true);
    expect(rows[0]).toMatchObject({ first: true });
    expect(rows.at(-1)).toMatchObject({ last: true });
    expect((t.entries[0] as MessageEntry).length).toBe(chunks.join("").length);
    expect(textOf(t.entries[0])).toBe(chunks.join(""));
  });

  it("keeps the rows of finished blocks as the message grows, and marks its last row wherever it ends", () => {
    const t = new Transcript();
    const paragraph = (i: number): string => `paragraph ${i} ${"x".repeat(200)}\n\n`;
    for (let i = 0; i < 200; i++) t.applyEvent(update(agentChunk(paragraph(i))));
    const before = t.rows();
    for (let i = 200; i < 400; i++) t.applyEvent(update(agentChunk(paragraph(i))));
    const after = t.rows();
    expect(after.length).toBeGreaterThan(before.length);
    const finished = before.filter((row) => row.part >= 0 && !row.last);
    expect(finished.length).toBeGreaterThan(5);
    // The same row objects, not copies made again: a frame of a long reply allocates only its new rows.
    for (const row of finished) expect(after[before.indexOf(row)]).toBe(row);
    expect(after.map((row) => row.key)).toEqual([...new Set(after.map((row) => row.key))]);
    expect(after.filter((row) => row.last)).toEqual([after.at(-1)]);
    expect(after.filter((row) => row.first)).toEqual([after[0]]);
    // The rows read back the whole text, in order.
    const message = t.entries[0] as MessageEntry;
    const shown = after.map((row) => (row.part >= 0 ? message.segments.blocks[row.part] : message.segments.tail)).join("");
    expect(shown).toBe(Array.from({ length: 400 }, (_, i) => paragraph(i)).join(""));
  });
});

describe("message segments", () => {
  it("keep the text as it came, except for fences closed and reopened at forced cuts", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: fc.constantFrom("a", " ", "\n", "`", "~", "#", "é", "😀"), maxLength: 3_000 }), { maxLength: 30 }),
        (chunks) => {
          const segments = emptySegments();
          for (const chunk of chunks) appendSegment(segments, chunk);
          const whole = chunks.join("");
          if (!whole.includes("```") && !whole.includes("~~~")) expect(segmentsText(segments)).toBe(whole);
          // No block is cut inside a surrogate pair.
          for (const block of segments.blocks) expect(/[\uD800-\uDBFF]$/.test(block)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("cut at blank lines outside code fences, and carry an open fence across a forced cut", () => {
    const segments = emptySegments();
    const code = Array.from({ length: 2_000 }, (_, i) => `line ${i}`).join("\n");
    appendSegment(segments, `Intro\n\n\`\`\`ts\n${code}\n\nmore\n`);
    for (const block of segments.blocks.slice(1)) expect(block.startsWith("```ts\n")).toBe(true);
    for (const block of segments.blocks.slice(0, -1)) if (block.includes("```ts")) expect(block.trimEnd().endsWith("```")).toBe(true);
    expect(segments.blocks[0]).toBe("Intro\n\n");
  });

  it("cut a long text appended at once (chunks Berth merged) as they would its chunks: the tail stays short", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", " ", "\n", "#", "é"), minLength: 20_000, maxLength: 70_000 }),
        fc.nat(200),
        (text, piece) => {
          const whole = emptySegments();
          appendSegment(whole, text);
          const streamed = emptySegments();
          for (let at = 0; at < text.length; at += piece + 1) appendSegment(streamed, text.slice(at, at + piece + 1));
          expect(segmentsText(whole)).toBe(text);
          // Never more than the forced-cut limit and one step of growth is left to render again per chunk.
          expect(whole.tail.length).toBeLessThan(HARD_LIMIT + CUT_STEP);
          expect(streamed.tail.length).toBeLessThan(HARD_LIMIT + CUT_STEP);
        },
      ),
      { numRuns: 50 },
    );
    const flood = emptySegments();
    appendSegment(flood, "abcdefghijklmnop".repeat(20_000));
    expect(flood.blocks).toHaveLength(Math.floor(320_000 / HARD_LIMIT));
    expect(flood.blocks.every((block) => block.length === HARD_LIMIT)).toBe(true);
  });

  it("cut a huge single line at the limit", () => {
    const segments = emptySegments();
    for (let i = 0; i < 4_000; i++) appendSegment(segments, "abcdefghijklmnop");
    expect(segments.blocks.length).toBeGreaterThan(2);
    expect(segmentsText(segments)).toBe("abcdefghijklmnop".repeat(4_000));
  });
});
