import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { T0, newSession, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();

/** What a list showed of each session before its ends were kept: read from the journal and the questions each time. */
function readAgain(store: Store, ids: readonly string[]) {
  return new Map(
    ids.map((id) => [
      id,
      { preview: store.events.lastWords(id), lastTurn: store.events.lastOutcome(id), pendingQuestions: store.questions.listPending(id).length },
    ]),
  );
}

const chunk = (text: string) => ({ update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } });
const toolCall = { update: { sessionUpdate: "tool_call", toolCallId: "t", title: "ls" } };

type Op =
  | { kind: "prompt"; session: number; text: string }
  | { kind: "chunk"; session: number; text: string }
  | { kind: "tool"; session: number }
  | { kind: "end"; session: number; stopReason: string; error: boolean }
  | { kind: "exit"; session: number }
  | { kind: "ask"; session: number }
  | { kind: "answer"; question: number }
  | { kind: "recreate"; session: number }
  | { kind: "look" };

const session = fc.integer({ min: 0, max: 2 });
const words = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom("**Done**: see `a.ts`", "# Plan\n- one", "🙂".repeat(90), "x".repeat(170)));
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("prompt" as const), session, text: words }),
  fc.record({ kind: fc.constant("chunk" as const), session, text: words }),
  fc.record({ kind: fc.constant("tool" as const), session }),
  fc.record({ kind: fc.constant("end" as const), session, stopReason: fc.constantFrom("end_turn", "cancelled"), error: fc.boolean() }),
  fc.record({ kind: fc.constant("exit" as const), session }),
  fc.record({ kind: fc.constant("ask" as const), session }),
  fc.record({ kind: fc.constant("answer" as const), question: fc.nat({ max: 20 }) }),
  fc.record({ kind: fc.constant("recreate" as const), session }),
  fc.constant({ kind: "look" as const }),
);

describe("the ends of sessions' journals, as a list shows them", () => {
  it("are what reading the journal and the questions again gives, whatever another connection (the writer) wrote since the last look", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const path = files.path();
        const writer = files.open(path);
        const reader = files.open(path);
        const ids = ["s0", "s1", "s2"];
        let created = T0;
        for (const id of ids) newSession(writer, id, { createdAt: created++ });
        const questions: string[] = [];
        const at = T0 + 1_000;
        const look = () => {
          const listed = reader.sessions.list();
          expect(reader.journalEnds.of(listed)).toEqual(readAgain(reader, ids));
        };
        for (const step of ops) {
          if (step.kind === "look") look();
          else if (step.kind === "answer") {
            const id = questions[step.question % Math.max(1, questions.length)];
            if (id !== undefined && writer.questions.get(id)?.state === "pending") writer.questions.resolve(id, "answered", { ok: true }, at);
          } else {
            const id = ids[step.session]!;
            if (step.kind === "prompt") writer.events.append(id, "turn_started", { prompt: [{ type: "text", text: step.text }] }, at);
            if (step.kind === "chunk") writer.events.append(id, "update", chunk(step.text), at);
            if (step.kind === "tool") writer.events.append(id, "update", toolCall, at);
            if (step.kind === "end") writer.events.append(id, "turn_ended", step.error ? { error: "boom" } : { stopReason: step.stopReason }, at);
            if (step.kind === "exit") writer.events.append(id, "agent_exited", { exit: "code 1" }, at);
            if (step.kind === "ask") {
              const question = `q${questions.length}`;
              writer.questions.ask({ id: question, sessionId: id, kind: "permission", request: {}, askedAt: at });
              questions.push(question);
            }
            if (step.kind === "recreate") {
              writer.sessions.delete(id);
              newSession(writer, id, { createdAt: created++ });
            }
          }
        }
        look();
        writer.close();
        reader.close();
      }),
      { numRuns: 60 },
    );
  });

  it("a session deleted and created again under its id shows its new journal, though it has as many events as the old one", () => {
    const store = files.open(files.path());
    newSession(store, "s", { createdAt: T0 });
    store.events.append("s", "turn_started", { prompt: [{ type: "text", text: "the old prompt" }] }, T0);
    expect(store.journalEnds.of(store.sessions.list()).get("s")?.preview?.text).toBe("the old prompt");
    store.sessions.delete("s");
    newSession(store, "s", { createdAt: T0 + 1 });
    store.events.append("s", "turn_started", { prompt: [{ type: "text", text: "the new prompt" }] }, T0 + 1);
    expect(store.journalEnds.of(store.sessions.list()).get("s")?.preview?.text).toBe("the new prompt");
  });

  it("a store opened again (a restart) shows what the one before it showed", () => {
    const path = files.path();
    const before = files.open(path);
    newSession(before, "s");
    before.events.append("s", "turn_started", { prompt: [{ type: "text", text: "Fix the parser" }] }, T0);
    before.events.append("s", "update", chunk("Fixed: it **accepts** `x` now."), T0 + 10);
    before.events.append("s", "turn_ended", { stopReason: "end_turn" }, T0 + 20);
    const shown = before.journalEnds.of(before.sessions.list());
    before.close();
    const after = files.open(path);
    expect(after.journalEnds.of(after.sessions.list())).toEqual(shown);
    expect(shown.get("s")).toEqual({
      preview: { role: "agent", text: "Fixed: it accepts x now.", at: T0 + 10 },
      lastTurn: { outcome: "completed", reason: null, at: T0 + 20 },
      pendingQuestions: 0,
    });
  });
});
