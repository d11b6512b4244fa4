import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { methods } from "@agentclientprotocol/sdk";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import type { BusyPrompt } from "../../src/agents/demo-agent/turn.js";
import { cleanUp, startFixture, tempDir, waitUntil, type AcpTestClient, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

/**
 * Demo agents that queue a prompt sent during a turn (as opencode, Claude, Codex), cancel the running turn for it (as
 * Gemini) or refuse it, each recording the messages it receives in `wire`; `<how>-batched` ones write a prompt's answer
 * and the first request for the prompt after it in one write to stdout (`--batch-writes`).
 */
function agents(wire: string) {
  const agent = (busy: BusyPrompt, ...args: string[]) => ({
    command: process.execPath,
    args: [demoAgentMain, "--state-dir", tempDir(`berth-busy-${busy}-`), "--busy-prompt", busy, "--record", wire, ...args],
  });
  return {
    ...Object.fromEntries((["queue", "queue-past-cancel", "cancel", "refuse"] satisfies BusyPrompt[]).map((busy) => [busy, agent(busy)])),
    "queue-batched": agent("queue", "--batch-writes"),
    "cancel-batched": agent("cancel", "--batch-writes"),
  };
}

/** How many messages of `method` the agent received. */
function received(wire: string, method: string): number {
  if (!existsSync(wire)) return 0;
  return readFileSync(wire, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { direction: string; message: { method?: string } })
    .filter(({ direction, message }) => direction === "in" && message.method === method).length;
}

/** What the agent sent after initializing, in order: each request's method, `answer` for a response. */
function sent(wire: string): string[] {
  return readFileSync(wire, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { direction: string; message: { method?: string } })
    .filter(({ direction, message }) => direction === "out" && message.method !== "session/update")
    .map(({ message }) => message.method ?? "answer");
}

/** The session's turns as the journal keeps them: each turn's prompt and how it ended, in journal order. */
function journaledTurns(fixture: BerthFixture, sessionId: string): string[] {
  return fixture.berth.host.events(sessionId).flatMap((event) => {
    const payload = event.payload as { prompt?: Array<{ text?: string }>; stopReason?: string | null };
    if (event.kind === "turn_started") return [`started ${payload.prompt?.[0]?.text}`];
    if (event.kind === "turn_ended") return [`ended ${payload.stopReason}`];
    return [];
  });
}

/** Records the order in which prompts are answered. */
function answered(order: string[], name: string, answer: Promise<{ stopReason: string }>): Promise<string> {
  return answer.then(({ stopReason }) => {
    order.push(name);
    return stopReason;
  });
}

async function twoClients(
  agent: string,
  config: Record<string, unknown> = {},
): Promise<{ fixture: BerthFixture; a: AcpTestClient; b: AcpTestClient; sessionId: string; wire: string }> {
  const wire = join(tempDir("berth-busy-wire-"), "wire.ndjson");
  const fixture = await startFixture({ config: { ...config, agents: agents(wire) } });
  const a = await fixture.connect({ agent });
  const sessionId = await a.newSession(fixture.workDir);
  const b = await fixture.connect({ agent });
  await b.load(sessionId, fixture.workDir);
  return { fixture, a, b, sessionId, wire };
}

/**
 * Two editors holding one session, both declaring fs: a's editor answers a read with "a's buffer" once the test lets it,
 * b's at once with "b's buffer"; both take writes without saving them. `notes` is in the session's directory.
 */
async function twoEditors(agent: string) {
  const wire = join(tempDir("berth-busy-wire-"), "wire.ndjson");
  const fixture = await startFixture({ config: { agents: agents(wire) } });
  const notes = join(fixture.workDir, "notes.txt");
  writeFileSync(notes, "on disk\n");
  const capabilities = { fs: { readTextFile: true, writeTextFile: true } };
  let letARead = () => {};
  const aMayRead = new Promise<void>((resolve) => (letARead = resolve));
  const a = await fixture.connect({
    agent,
    capabilities,
    files: { read: () => aMayRead.then(() => ({ content: "a's buffer\n" })), write: async () => ({}) },
  });
  const sessionId = await a.newSession(fixture.workDir);
  const b = await fixture.connect({ agent, capabilities, files: { read: async () => ({ content: "b's buffer\n" }), write: async () => ({}) } });
  await b.load(sessionId, fixture.workDir);
  return { fixture, a, b, sessionId, notes, wire, letARead };
}

/** The journal after two prompts of one turn were cancelled and a third ran: each prompt its own turn, in order. */
const bothCancelledThenAgain = ["started /sleep 1h", "ended cancelled", "started /sleep 1h", "ended cancelled", "started again", "ended end_turn"];

describe("ACP: a prompt sent during a turn goes to the agent", () => {
  it("a queueing agent: each prompt is its own turn, answered in order, and the turn is in flight until the last answer", async () => {
    const { fixture, a, b, sessionId } = await twoClients("queue");
    const order: string[] = [];
    const first = answered(order, "first", a.prompt(sessionId, "/ask first?"));
    await waitUntil(() => a.permissions.length === 1, "the first prompt's question");
    const second = answered(order, "second", a.prompt(sessionId, "/ask second?"));
    // The first turn waits for its answer: the second prompt is queued at the agent, not refused.
    a.permissions[0]!.answer({ outcome: { outcome: "selected", optionId: "allow" } });
    expect(await first).toBe("end_turn");
    await waitUntil(() => a.permissions.length === 2, "the second prompt's question");
    expect(order).toEqual(["first"]);
    expect(fixture.berth.host.getSession(sessionId)).toMatchObject({ turnActive: true });
    a.permissions[1]!.answer({ outcome: { outcome: "selected", optionId: "deny" } });
    expect(await second).toBe("end_turn");
    expect(order).toEqual(["first", "second"]);
    await waitUntil(() => !fixture.berth.host.getSession(sessionId)!.turnActive, "the turn to settle after the last answer");

    expect(journaledTurns(fixture, sessionId)).toEqual(["started /ask first?", "ended end_turn", "started /ask second?", "ended end_turn"]);
    // The other client saw each prompt as its own user message, each before the agent's words for it.
    await waitUntil(() => b.texts(sessionId).includes("You chose: deny"), "the other client saw the second answer");
    expect(b.texts(sessionId, "user_message_chunk")).toBe("/ask first?/ask second?");
    expect(b.texts(sessionId)).toBe("You chose: allowYou chose: deny");
    // The prompting client is not shown its own prompts.
    expect(a.texts(sessionId, "user_message_chunk")).toBe("");
  });

  it("an agent that cancels the running turn for the new prompt: the first ends cancelled, then the second runs", async () => {
    const { fixture, a, b, sessionId } = await twoClients("cancel");
    const first = a.prompt(sessionId, "/sleep 1h");
    await waitUntil(() => fixture.berth.host.getSession(sessionId)!.turnActive, "the first turn runs");
    // Another client's prompt during the turn reaches the agent too.
    const second = b.prompt(sessionId, "instead");
    expect((await first).stopReason).toBe("cancelled");
    expect((await second).stopReason).toBe("end_turn");
    // The two answers go to two connections, which this process reads in no set order: the journal says which
    // turn ended first.
    await waitUntil(() => !fixture.berth.host.getSession(sessionId)!.turnActive, "the turn to settle after the last answer");
    expect(journaledTurns(fixture, sessionId)).toEqual(["started /sleep 1h", "ended cancelled", "started instead", "ended end_turn"]);
    expect(a.texts(sessionId, "user_message_chunk")).toBe("instead");
    expect(b.texts(sessionId, "user_message_chunk")).toBe("/sleep 1h");
    // No interruption was Berth's: the agent cancelled its own turn.
    expect(fixture.berth.host.events(sessionId).filter((event) => event.kind === "interrupted")).toEqual([]);
  });

  it("an agent that refuses it: the refusal comes at once, and the prompt is echoed to the other client only, after the first turn", async () => {
    const { fixture, a, b, sessionId } = await twoClients("refuse");
    const first = a.prompt(sessionId, "/ask first?");
    await waitUntil(() => a.permissions.length === 1, "the first prompt's question");
    // The agent names its own session in the error's data: the client reads Berth's id there.
    await expect(a.prompt(sessionId, "refused")).rejects.toMatchObject({ code: -32600, data: { sessionId } });
    a.permissions[0]!.answer({ outcome: { outcome: "selected", optionId: "allow" } });
    expect((await first).stopReason).toBe("end_turn");
    // The refused prompt is journaled once the turn before it ended: the other client sees it then.
    await waitUntil(() => b.texts(sessionId, "user_message_chunk") === "/ask first?refused", "the other client saw both prompts");
    await waitUntil(() => !fixture.berth.host.getSession(sessionId)!.turnActive, "the turn to settle");
    expect(journaledTurns(fixture, sessionId)).toEqual(["started /ask first?", "ended end_turn", "started refused", "ended null"]);
    // Its sender is not shown its own prompt, late as its turn came.
    expect(a.texts(sessionId, "user_message_chunk")).toBe("");
  });

  it("session/cancel stops every prompt in flight, and a prompt after it waits for no refusal once they ended", async () => {
    const { fixture, a, sessionId, wire } = await twoClients("queue");
    const first = a.prompt(sessionId, "/sleep 1h");
    await waitUntil(() => fixture.berth.host.getSession(sessionId)!.turnActive, "the first turn runs");
    const second = a.prompt(sessionId, "/sleep 1h");
    await waitUntil(() => received(wire, "session/prompt") === 2, "the agent has both prompts");
    await a.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await first).stopReason).toBe("cancelled");
    expect((await second).stopReason).toBe("cancelled");
    await waitUntil(() => !fixture.berth.host.getSession(sessionId)!.turnActive, "the turn to settle");
    expect((await a.prompt(sessionId, "again")).stopReason).toBe("end_turn");
    expect(journaledTurns(fixture, sessionId)).toEqual(bothCancelledThenAgain);
  });

  it.each([
    ["queue-batched", "end_turn"],
    ["cancel-batched", "cancelled"],
  ])(
    "%s: the agent's fs/* go to the editor whose prompt it works on, even a request sent in the same write as the answer before it",
    async (agent, firstStop) => {
      const { a, b, sessionId, notes, wire, letARead } = await twoEditors(agent);
      // /edit reads, then writes: a's write is asked for while b's prompt waits at the agent.
      const first = a.prompt(sessionId, `/edit ${notes} edited`);
      await waitUntil(() => a.fileRequests.length === 1, "a's editor is asked to read");
      const second = b.prompt(sessionId, `/read ${notes}`);
      await waitUntil(() => received(wire, "session/prompt") === 2, "the agent has b's prompt too");
      // The agent answers a's prompt once a's editor answered; its read for b's prompt comes in the same write.
      letARead();
      expect((await first).stopReason).toBe(firstStop);
      expect((await second).stopReason).toBe("end_turn");
      expect(a.fileRequests.map(({ method }) => method)).toEqual(["fs/read_text_file", "fs/write_text_file"]);
      expect(b.fileRequests).toEqual([{ method: "fs/read_text_file", params: { sessionId, path: notes } }]);
      expect(b.texts(sessionId)).toContain(`Contents of ${notes}:\nb's buffer`);
      // Neither editor saves: the disk has what it had.
      expect(readFileSync(notes, "utf8")).toBe("on disk\n");
      expect(sent(wire).slice(-3)).toEqual(["answer", "fs/read_text_file", "answer"]);
    },
  );

  it("a prompt the agent refused during a turn does not take the editor's place: the turn's later fs/* still go to its editor", async () => {
    const { fixture, a, b, sessionId, notes, letARead } = await twoEditors("refuse");
    // /edit reads, then writes: the write is asked for after b's prompt was refused.
    const first = a.prompt(sessionId, `/edit ${notes} edited`);
    await waitUntil(() => a.fileRequests.length === 1, "a's editor is asked to read");
    await expect(b.prompt(sessionId, `/read ${notes}`)).rejects.toMatchObject({ code: -32600 });
    letARead();
    expect((await first).stopReason).toBe("end_turn");
    expect(a.fileRequests.map(({ method }) => method)).toEqual(["fs/read_text_file", "fs/write_text_file"]);
    expect(b.fileRequests).toEqual([]);
    // a's editor took the write (it saves nothing): the disk still has what it had.
    expect(readFileSync(notes, "utf8")).toBe("on disk\n");
    await waitUntil(() => !fixture.berth.host.getSession(sessionId)!.turnActive, "the turn to settle");
  });

  it("an agent that cancels only its running prompt and starts the queued one: Berth cancels that too, and does not stop the agent", async () => {
    // Long enough for an agent that answers each cancel; before it was sent again, the second prompt waited it out.
    const { fixture, a, b, sessionId, wire } = await twoClients("queue-past-cancel", { interruptTimeout: "20s" });
    const first = a.prompt(sessionId, "/sleep 1h");
    await waitUntil(() => fixture.berth.host.getSession(sessionId)!.turnActive, "the first turn runs");
    const second = b.prompt(sessionId, "/sleep 1h");
    await waitUntil(() => received(wire, "session/prompt") === 2, "the agent has both prompts");
    const pid = fixture.berth.host.getSession(sessionId)!.pid;
    expect(pid).toEqual(expect.any(Number));
    await a.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await first).stopReason).toBe("cancelled");
    // The agent started the queued prompt: Berth sent session/cancel again for it.
    expect((await second).stopReason).toBe("cancelled");
    expect(received(wire, "session/cancel")).toBe(2);
    await waitUntil(() => !fixture.berth.host.getSession(sessionId)!.turnActive, "the turn to settle");
    expect((await a.prompt(sessionId, "again")).stopReason).toBe("end_turn");
    expect(fixture.berth.host.getSession(sessionId)!.pid).toBe(pid);
    expect(journaledTurns(fixture, sessionId)).toEqual(bothCancelledThenAgain);
  });
});
