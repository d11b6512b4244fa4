import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, initializeParams, RawSocket, startFixture, waitUntil } from "./server-harness.js";

afterEach(cleanUp);

type Update = { sessionUpdate: string; content?: { text?: string } };
type Notification = { method?: string; params?: { update: Update; _meta?: Record<string, unknown> } };

/** A raw client that resumes the session, with or without `berth/journalSeq`. */
async function resumed(acpUrl: string, token: string, sessionId: string, cwd: string, seqs: boolean): Promise<RawSocket> {
  const socket = await RawSocket.open(acpUrl, token);
  const clientCapabilities = seqs ? { _meta: { "berth/journalSeq": true } } : {};
  socket.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { ...initializeParams, clientCapabilities } });
  await socket.response(1);
  socket.send({ jsonrpc: "2.0", id: 2, method: "session/resume", params: { sessionId, cwd, mcpServers: [] } });
  await socket.response(2);
  return socket;
}

const updatesOf = (socket: RawSocket) => (socket.messages as Notification[]).filter((m) => m.method === "session/update").map((m) => m.params!);

describe("berth/journalSeq: live updates numbered as the journal numbers them", () => {
  it("carries each update's seq; merged chunks cover the journal's seqs exactly, their text joined in order", async () => {
    const fixture = await startFixture();
    const { host } = fixture.berth;
    const sessionId = (await host.createSession({ cwd: fixture.workDir })).id;
    const reader = await resumed(fixture.acpUrl, fixture.token, sessionId, fixture.workDir, true);
    const plain = await resumed(fixture.acpUrl, fixture.token, sessionId, fixture.workDir, false);
    expect((await host.prompt(sessionId, [{ type: "text", text: "/flood 3000 16" }])).stopReason).toBe("end_turn");

    const journal = host.events(sessionId, { after: 0, limit: 10_000 });
    const floodEvents = journal.filter(
      (e) => e.kind === "update" && (e.payload as { update: Update }).update.sessionUpdate === "agent_message_chunk",
    );
    const expectedText = floodEvents.map((e) => (e.payload as { update: Update }).update.content?.text ?? "").join("");
    await waitUntil(
      () => updatesOf(reader).reduce((n, u) => n + (u.update.content?.text?.length ?? 0), 0) >= expectedText.length,
      "every chunk reached the reader",
    );

    const received = updatesOf(reader).filter((u) => u.update.sessionUpdate === "agent_message_chunk");
    const covered: number[] = [];
    for (const { _meta } of received) {
      const last = _meta?.["berth/seq"] as number;
      const first = (_meta?.["berth/seqFrom"] as number | undefined) ?? last;
      expect(first).toBeLessThanOrEqual(last);
      for (let seq = first; seq <= last; seq++) covered.push(seq);
    }
    expect(covered).toEqual(floodEvents.map((e) => e.seq));
    expect(received.map((u) => u.update.content!.text).join("")).toBe(expectedText);
    // A client that did not ask sees every chunk as the agent sent it, with no seq.
    await waitUntil(
      () => updatesOf(plain).filter((u) => u.update.sessionUpdate === "agent_message_chunk").length >= 3000,
      "every chunk reached the plain client",
    );
    const plainChunks = updatesOf(plain).filter((u) => u.update.sessionUpdate === "agent_message_chunk");
    expect(plainChunks).toHaveLength(3000);
    expect(plainChunks.every((u) => u._meta === undefined)).toBe(true);
  });

  it("does not echo another client's prompt to a seq reader (it reads turn_started from the journal); others still see it", async () => {
    const fixture = await startFixture();
    const { host } = fixture.berth;
    const sessionId = (await host.createSession({ cwd: fixture.workDir })).id;
    const reader = await resumed(fixture.acpUrl, fixture.token, sessionId, fixture.workDir, true);
    const plain = await resumed(fixture.acpUrl, fixture.token, sessionId, fixture.workDir, false);
    expect((await host.prompt(sessionId, [{ type: "text", text: "hello there" }])).stopReason).toBe("end_turn");
    await waitUntil(() => updatesOf(plain).some((u) => u.update.sessionUpdate === "user_message_chunk"), "the plain client saw the prompt");
    await waitUntil(() => updatesOf(reader).some((u) => u.update.sessionUpdate === "agent_message_chunk"), "the reader saw the reply");
    await waitUntil(() => updatesOf(plain).some((u) => u.update.sessionUpdate === "agent_message_chunk"), "the plain client saw the reply");
    expect(updatesOf(reader).some((u) => u.update.sessionUpdate === "user_message_chunk")).toBe(false);
    const started = host.events(sessionId, { after: 0, limit: 100 }).find((e) => e.kind === "turn_started")!;
    // The reply's first seq comes right after the prompt's turn_started: the gap is what the reader reads over REST.
    const reply = updatesOf(reader).find((u) => u.update.sessionUpdate === "agent_message_chunk")!;
    const firstSeq = (reply._meta?.["berth/seqFrom"] ?? reply._meta?.["berth/seq"]) as number;
    expect(firstSeq).toBe(started.seq + 1);
  });
});
