import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/host/views.js";
import type { ReadEvent } from "../../src/host/views.js";
import { mergedEvents } from "../../src/server/chunk-merging.js";

type Chunk = { sessionUpdate: string; messageId?: string | null; content: { type: string; text?: string; annotations?: unknown } };

/** One journal event as a test writes it: plain chunks of a few kinds and messages, and what must never be merged. */
const eventShape = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("update" as const),
      chunk: fc.constantFrom("agent_message_chunk", "user_message_chunk", "agent_thought_chunk"),
      messageId: fc.constantFrom("m1", "m2", null, undefined),
      text: fc.string({ unit: fc.constantFrom("a", "b", "\n", "é", "😀"), maxLength: 40 }),
      extra: fc.constantFrom("none", "none", "none", "meta", "annotations", "image"),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("turn_started" as const, "turn_ended" as const, "tool_call" as const) }) },
);

function journalOf(shapes: readonly unknown[], gaps: readonly boolean[]): JournalEvent[] {
  let seq = 0;
  return shapes.map((shape, index) => {
    seq += gaps[index] ? 2 : 1;
    const s = shape as { kind: string; chunk?: string; messageId?: string | null; text?: string; extra?: string };
    const at = 1_000 + seq;
    if (s.kind === "tool_call") {
      const update = { sessionUpdate: "tool_call", toolCallId: `t${seq}`, title: "ls" };
      return { sessionId: "s", seq, kind: "update", payload: { update }, at } as JournalEvent;
    }
    if (s.kind !== "update") return { sessionId: "s", seq, kind: s.kind, payload: {}, at } as JournalEvent;
    const content = s.extra === "image" ? { type: "image", data: "", mimeType: "image/png" } : { type: "text", text: s.text };
    const chunk: Record<string, unknown> = { sessionUpdate: s.chunk, content };
    if (s.messageId !== undefined) chunk.messageId = s.messageId;
    if (s.extra === "annotations") (content as Record<string, unknown>).annotations = { priority: 1 };
    const payload = s.extra === "meta" ? { update: chunk, _meta: { "berth/notice": {} } } : { update: chunk };
    return { sessionId: "s", seq, kind: "update", payload: payload as never, at } as JournalEvent;
  });
}

const isPlain = (event: JournalEvent): boolean => {
  const payload = event.payload as { update?: Chunk; _meta?: unknown };
  const update = payload.update;
  return (
    event.kind === "update" &&
    !payload._meta &&
    update !== undefined &&
    update.sessionUpdate.endsWith("_chunk") &&
    update.content.type === "text" &&
    update.content.annotations === undefined
  );
};

/** Reads the journal as a REST reader pages it: from `after`, pages of at most `limit` events, each merged. */
function pagedRead(journal: readonly JournalEvent[], after: number, limit: number): ReadEvent[] {
  const read: ReadEvent[] = [];
  let from = after;
  for (;;) {
    const page = journal.filter((event) => event.seq > from).slice(0, limit);
    if (page.length === 0) return read;
    read.push(...mergedEvents(page));
    from = read.at(-1)!.seq;
  }
}

describe("mergedEvents: the journal's chunks merged for a REST reader", () => {
  it("loses, repeats and reorders nothing, from any seq and with any page size", () => {
    fc.assert(
      fc.property(
        fc.array(eventShape, { maxLength: 80 }),
        fc.array(fc.boolean(), { maxLength: 80 }),
        fc.nat(100),
        fc.integer({ min: 1, max: 30 }),
        (shapes, gaps, afterIndex, limit) => {
          const journal = journalOf(shapes, gaps);
          const after = journal[afterIndex]?.seq ?? 0;
          const expected = journal.filter((event) => event.seq > after);
          const read = pagedRead(journal, after, limit);
          const bySeq = new Map(expected.map((event) => [event.seq, event]));
          const covered: number[] = [];
          for (const event of read) {
            const first = event.seqFrom ?? event.seq;
            expect(first).toBeLessThanOrEqual(event.seq);
            const originals = expected.filter((e) => e.seq >= first && e.seq <= event.seq);
            covered.push(...originals.map((e) => e.seq));
            if (event.seqFrom === undefined && originals.length === 1 && !isPlain(originals[0]!)) {
              // Anything that is not a plain chunk is served as it is.
              expect(event).toEqual(bySeq.get(event.seq));
              continue;
            }
            // A merged event stands for plain chunks of one kind and message, with no gap between their seqs.
            expect(originals.every(isPlain)).toBe(true);
            expect(originals.map((e) => e.seq)).toEqual(Array.from({ length: event.seq - first + 1 }, (_, i) => first + i));
            const updates = originals.map((e) => (e.payload as { update: Chunk }).update);
            expect(new Set(updates.map((u) => `${u.sessionUpdate}/${u.messageId}`)).size).toBe(1);
            const merged = (event.payload as { update: Chunk }).update;
            expect(merged).toEqual({ ...updates[0], content: { type: "text", text: updates.map((u) => u.content.text).join("") } });
            expect(event.at).toBe(originals.at(-1)!.at);
          }
          expect(covered).toEqual(expected.map((event) => event.seq));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("leaves a malformed chunk unmerged and never throws, whatever the agent sent as content", () => {
    // The journal keeps what the agent sent; only `sessionId` and `sessionUpdate` were checked on the way in.
    const malformed = fc.record({
      kind: fc.constant("malformed" as const),
      chunk: fc.constantFrom("agent_message_chunk", "user_message_chunk", "agent_thought_chunk"),
      content: fc
        .oneof(
          fc.constant(null),
          fc.constant(undefined),
          fc.constant({ type: "text" }),
          fc.record({ type: fc.constant("text"), text: fc.oneof(fc.constant(null), fc.integer(), fc.array(fc.string()), fc.object()) }),
          fc.anything(),
        )
        .filter((content) => typeof (content as { text?: unknown } | null)?.text !== "string"),
    });
    fc.assert(
      fc.property(fc.array(fc.oneof(eventShape, malformed), { maxLength: 60 }), fc.integer({ min: 1, max: 20 }), (shapes, limit) => {
        const journal = shapes.map((shape, index): JournalEvent => {
          const seq = index + 1;
          if (shape.kind !== "malformed") return journalOf([shape], [false]).map((event) => ({ ...event, seq }))[0]!;
          const payload = { update: { sessionUpdate: shape.chunk, content: shape.content } };
          return { sessionId: "s", seq, kind: "update", payload: payload as never, at: seq } as JournalEvent;
        });
        const read = pagedRead(journal, 0, limit);
        const covered = read.flatMap((event) => journal.filter((e) => e.seq >= (event.seqFrom ?? event.seq) && e.seq <= event.seq));
        expect(covered.map((event) => event.seq)).toEqual(journal.map((event) => event.seq));
        for (const event of journal.filter((_, index) => shapes[index]!.kind === "malformed")) {
          // Served as it is, never folded into a neighbour.
          expect(read.find((e) => e.seq === event.seq)).toEqual(event);
          expect(read.some((e) => e.seqFrom !== undefined && e.seqFrom <= event.seq && event.seq < e.seq)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("joins a long run into chunks of at most 65,536 UTF-16 code units of text", () => {
    const chunks = Array.from({ length: 10_000 }, (_, i) => ({
      sessionId: "s",
      seq: i + 1,
      kind: "update",
      payload: { update: { sessionUpdate: "agent_message_chunk", messageId: "m", content: { type: "text", text: "0123456789abcdef" } } } as never,
      at: i,
    }));
    const read = mergedEvents(chunks);
    expect(read.map((event) => [event.seqFrom, event.seq])).toEqual([
      [1, 4_096],
      [4_097, 8_192],
      [8_193, 10_000],
    ]);
    expect(read.map((event) => (event.payload as { update: Chunk }).update.content.text!.length)).toEqual([65_536, 65_536, 28_928]);
  });
});
