import { afterEach, describe, expect, it, vi } from "vitest";
import { MessageLimitedSocket } from "../../src/server/message-limited-socket.js";
import { capturedLog, cleanUp, initializeParams, RawSocket, startFixture, upgradeOutcome, waitUntil } from "./server-harness.js";

afterEach(cleanUp);

describe("ACP endpoint: refusals and bad input", () => {
  it("refuses upgrades without the token, with a wrong token, or from a foreign origin", async () => {
    const fixture = await startFixture();
    const port = new URL(fixture.url).port;
    const bearer = { authorization: `Bearer ${fixture.token}` };
    expect(await upgradeOutcome(fixture.acpUrl, {})).toBe(401);
    expect(await upgradeOutcome(fixture.acpUrl, { authorization: "Bearer wrong-token-of-some-length" })).toBe(401);
    expect(await upgradeOutcome(`${fixture.acpUrl}?token=nope`, {})).toBe(401);
    expect(await upgradeOutcome(fixture.acpUrl, { ...bearer, origin: "http://evil.example" })).toBe(403);
    expect(await upgradeOutcome(fixture.acpUrl, { ...bearer, origin: `http://localhost:${Number(port) + 1}` })).toBe(403);
    expect(await upgradeOutcome(`${fixture.url.replace("http", "ws")}/elsewhere`, bearer)).toBe(404);

    // A cookie is never a credential.
    expect(await upgradeOutcome(fixture.acpUrl, { cookie: `berth_token=${fixture.token}` })).toBe(401);

    // The token in the query is no credential (proxies log URLs).
    expect(await upgradeOutcome(`${fixture.acpUrl}?token=${fixture.token}`, {})).toBe(401);
    // The server's own pages, a ticket in the query, and clients that send no Origin are let in.
    expect(await upgradeOutcome(fixture.acpUrl, { ...bearer, origin: `http://127.0.0.1:${port}` })).toBe("open");
    expect(await upgradeOutcome(fixture.acpUrl, { ...bearer, origin: `http://localhost:${port}`, host: `localhost:${port}` })).toBe("open");
    // An Origin must name the host the request was sent to: another page's name for this machine is another origin.
    expect(await upgradeOutcome(fixture.acpUrl, { ...bearer, origin: `http://localhost:${port}` })).toBe(403);
    const { ticket } = (await (await fixture.api("/api/tickets", { method: "POST" })).json()) as { ticket: string };
    expect(await upgradeOutcome(`${fixture.acpUrl}?ticket=${ticket}`, {})).toBe("open");
    expect(fixture.berth.host.listSessions()).toEqual([]);
  });

  it("answers malformed frames, unknown methods, oversized messages and unknown sessions with JSON-RPC errors and keeps the connection", async () => {
    const fixture = await startFixture({ maxMessageBytes: 64 * 1024 });
    const raw = await RawSocket.open(fixture.acpUrl, fixture.token);
    raw.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    // The agent's own answer, with what Berth adds.
    expect(await raw.response(1)).toMatchObject({
      result: { protocolVersion: 1, agentInfo: { name: "berth-demo-agent" }, _meta: { "berth/host": { name: "berth" } } },
    });

    raw.send("{ this is not json");
    await waitUntil(() => raw.messages.some((m) => (m.error as { code?: number } | undefined)?.code === -32700), "a parse error");
    expect(raw.messages.find((m) => m.id === null)).toMatchObject({ error: { code: -32700 } });

    raw.send({ jsonrpc: "2.0", id: 2, method: "session/teleport", params: {} });
    expect(await raw.response(2)).toMatchObject({ error: { code: -32601 } });

    raw.send({
      jsonrpc: "2.0",
      id: 3,
      method: "session/prompt",
      params: { sessionId: "s", prompt: [{ type: "text", text: "x".repeat(100 * 1024) }] },
    });
    const oversized = await raw.response(3);
    expect(oversized).toMatchObject({ error: { code: -32600, data: { limit: 64 * 1024 } } });
    expect((oversized.error as { message: string }).message).toMatch(/more than the limit of 65536 bytes/);

    raw.send({ jsonrpc: "2.0", id: 4, method: "session/load", params: { sessionId: "no-such-session", cwd: fixture.workDir, mcpServers: [] } });
    expect(await raw.response(4)).toMatchObject({ error: { code: -32002 } });
    raw.send({ jsonrpc: "2.0", id: 5, method: "session/prompt", params: { sessionId: "no-such-session", prompt: [] } });
    expect(await raw.response(5)).toMatchObject({ error: { code: -32002 } });
    raw.send({ jsonrpc: "2.0", id: 6, method: "session/new", params: { cwd: "relative/dir", mcpServers: [] } });
    expect(await raw.response(6)).toMatchObject({ error: { code: -32602, message: expect.stringContaining('relative path "relative/dir"') } });
    raw.send({ jsonrpc: "2.0", id: 7, method: "session/new", params: { cwd: fixture.workDir, mcpServers: [], _meta: { "berth/agent": "nope" } } });
    expect(await raw.response(7)).toMatchObject({ error: { code: -32602, message: expect.stringContaining('unknown agent "nope"') } });
    expect(fixture.berth.host.listSessions()).toEqual([]);

    // The same connection still works, and so does the host.
    raw.send({ jsonrpc: "2.0", id: 8, method: "session/new", params: { cwd: fixture.workDir, mcpServers: [] } });
    const created = await raw.response(8);
    const sessionId = (created.result as { sessionId: string }).sessionId;
    raw.send({ jsonrpc: "2.0", id: 9, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "still alive" }] } });
    expect(await raw.response(9)).toMatchObject({ result: { stopReason: "end_turn" } });
    expect((await fetch(`${fixture.url}/healthz`)).status).toBe(200);
    await raw.close();
  });

  it("logs a client's error, malformed or unfitting reply to a permission request, and the question waits for an answer that fits", async () => {
    const { log, lines } = capturedLog();
    const fixture = await startFixture({ log });
    const clients: RawSocket[] = [];
    let sessionId = "";
    for (let i = 0; i < 3; i++) {
      const raw = await RawSocket.open(fixture.acpUrl, fixture.token);
      clients.push(raw);
      raw.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
      await raw.response(1);
      if (i === 0) {
        raw.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: fixture.workDir, mcpServers: [] } });
        sessionId = ((await raw.response(2)).result as { sessionId: string }).sessionId;
        raw.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "/ask may I?" }] } });
      } else {
        raw.send({ jsonrpc: "2.0", id: 2, method: "session/resume", params: { sessionId, cwd: fixture.workDir, mcpServers: [] } });
        await raw.response(2);
      }
    }
    const asked = (raw: RawSocket) => raw.messages.find((message) => message.method === "session/request_permission");
    await waitUntil(() => clients.every(asked), "every client is asked");
    const [errs, malformed, unfitting] = clients.map((raw) => ({ raw, id: asked(raw)!.id }));
    errs!.raw.send({ jsonrpc: "2.0", id: errs!.id, error: { code: -32000, message: "this client shows no questions" } });
    malformed!.raw.send({ jsonrpc: "2.0", id: malformed!.id, result: { outcome: "yes" } });
    unfitting!.raw.send({ jsonrpc: "2.0", id: unfitting!.id, result: { outcome: { outcome: "selected", optionId: "maybe" } } });
    const refusals = () => lines.filter((line) => line.msg === "a client's answer was refused");
    await waitUntil(() => refusals().length === 3, "three refusals logged");
    const { questions } = (await (await fixture.api(`/api/questions?sessionId=${sessionId}`)).json()) as {
      questions: Array<{ id: string; state: string; request: { options: Array<{ optionId: string }> } }>;
    };
    expect(questions).toEqual([expect.objectContaining({ state: "pending" })]);
    const [question] = questions;
    expect(refusals().map((line) => ({ questionId: line.questionId, sessionId: line.sessionId }))).toEqual(
      Array(3).fill({ questionId: question!.id, sessionId }),
    );
    const said = refusals().map((line) => String((line.err as { message?: string }).message));
    expect(said).toEqual(
      expect.arrayContaining([
        "this client shows no questions",
        'the reply is no permission outcome ({ "outcome": "selected", "optionId": ... } or "cancelled"): {"outcome":"yes"}',
        expect.stringContaining('no option "maybe"'),
      ]),
    );
    // The refused replies changed nothing: an answer that fits ends the turn.
    const answered = await fixture.api(`/api/questions/${question!.id}/answer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ optionId: question!.request.options[0]!.optionId }),
    });
    expect(answered.status).toBe(200);
    expect(await errs!.raw.response(3)).toMatchObject({ result: { stopReason: "end_turn" } });
    await Promise.all(clients.map((raw) => raw.close()));
  });

  it("refuses a message nested deeper than 64 levels with -32600 naming the limit; the agent stays and another client's turn goes on", async () => {
    const fixture = await startFixture();
    const { host } = fixture.berth;
    const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
    const a = await RawSocket.open(fixture.acpUrl, fixture.token);
    a.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await a.response(1);
    a.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: fixture.workDir, mcpServers: [] } });
    const sessionId = ((await a.response(2)).result as { sessionId: string }).sessionId;
    a.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "/sleep 1h" }] } });
    await waitUntil(() => host.getSession(sessionId)!.turnActive, "A's turn runs");
    const pid = host.getSession(sessionId)!.pid;

    const b = await RawSocket.open(fixture.acpUrl, fixture.token);
    b.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await b.response(1);
    b.send({ jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId, cwd: fixture.workDir, mcpServers: [] } });
    await b.response(2);
    // 36 KB nested 6,000 deep: the agent's session and a new one.
    const tooDeep = {
      code: -32600,
      message: "Invalid request: the message nests objects and arrays more than 64 levels deep, the limit",
      data: { limit: 64 },
    };
    b.send(
      `{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"${sessionId}","modeId":"code","_meta":{"x":${nested(6000)}}}}`,
    );
    expect(await b.response(3)).toEqual({ jsonrpc: "2.0", id: 3, error: tooDeep });
    b.send(
      `{"jsonrpc":"2.0","id":"deep","method":"session/new","params":{"cwd":"${fixture.workDir}","mcpServers":[],"_meta":{"x":${nested(6000)}}}}`,
    );
    expect(await b.response("deep")).toEqual({ jsonrpc: "2.0", id: "deep", error: tooDeep });
    // A notification that deep is dropped: had it reached the agent, it would have cancelled A's turn.
    b.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"${sessionId}","_meta":{"x":${nested(6000)}}}}`);
    // 64 levels in all (the message, params, _meta and 61 arrays) is within the limit; 65 is not.
    b.send(`{"jsonrpc":"2.0","id":5,"method":"session/set_mode","params":{"sessionId":"${sessionId}","modeId":"code","_meta":{"x":${nested(62)}}}}`);
    expect(await b.response(5)).toEqual({ jsonrpc: "2.0", id: 5, error: tooDeep });
    b.send(`{"jsonrpc":"2.0","id":4,"method":"session/set_mode","params":{"sessionId":"${sessionId}","modeId":"code","_meta":{"x":${nested(61)}}}}`);
    expect(await b.response(4)).toMatchObject({ result: {} });

    expect(host.listSessions()).toHaveLength(1);
    expect(host.getSession(sessionId)).toMatchObject({ pid, turnActive: true });
    expect(host.recentRecords().filter((r) => r.record.kind === "child_exited")).toEqual([]);
    a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    expect(await a.response(3)).toMatchObject({ result: { stopReason: "cancelled" } });
    await Promise.all([a.close(), b.close()]);
  });

  it("passes a second session/prompt during a turn to the agent, and refuses one while the turn is being cancelled", async () => {
    const fixture = await startFixture({ config: { interruptTimeout: "2s" } });
    const raw = await RawSocket.open(fixture.acpUrl, fixture.token);
    raw.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await raw.response(1);
    raw.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: fixture.workDir, mcpServers: [] } });
    const sessionId = ((await raw.response(2)).result as { sessionId: string }).sessionId;
    raw.send({
      jsonrpc: "2.0",
      id: 3,
      method: "session/prompt",
      params: { sessionId, prompt: [{ type: "text", text: "/sleep --ignore-cancel 1h" }] },
    });
    await waitUntil(() => fixture.berth.host.getSession(sessionId)!.turnActive, "the first turn runs");
    // The demo agent refuses a prompt during a turn by default: its own error, as it sent it.
    raw.send({ jsonrpc: "2.0", id: 4, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "me too" }] } });
    expect(await raw.response(4)).toMatchObject({ error: { code: -32600, message: expect.stringContaining("a prompt turn is already running") } });
    // Once cancelled, the turn stays in flight until the agent answers: a prompt then would join a turn being stopped.
    raw.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    await waitUntil(() => fixture.berth.host.events(sessionId).some((event) => event.kind === "interrupted"), "the turn is being interrupted");
    raw.send({ jsonrpc: "2.0", id: 5, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "me too" }] } });
    expect(await raw.response(5)).toMatchObject({
      error: { code: -32600, message: expect.stringContaining("is cancelling its turn in flight"), data: { code: "turn_in_flight" } },
    });
    // The agent ignores the cancel: it is stopped after interruptTimeout, and the turn ends.
    expect(await raw.response(3)).toMatchObject({ error: { code: -32603 } });
    // The refused prompt was answered at once, and journaled in its place: after the turn before it.
    const turns = () =>
      fixture.berth.host
        .events(sessionId)
        .filter((event) => event.kind === "turn_started" || event.kind === "turn_ended")
        .map((event) => `${event.kind} ${JSON.stringify((event.payload as { prompt?: Array<{ text: string }> }).prompt?.[0]?.text ?? null)}`);
    await waitUntil(() => turns().length === 4, "both turns journaled");
    expect(turns()).toEqual(['turn_started "/sleep --ignore-cancel 1h"', "turn_ended null", 'turn_started "me too"', "turn_ended null"]);
    await raw.close();
  });

  it("never echoes a prompt the agent refused during a turn back to its sender when its turn is journaled later", async () => {
    const fixture = await startFixture();
    const raw = await RawSocket.open(fixture.acpUrl, fixture.token);
    raw.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await raw.response(1);
    raw.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: fixture.workDir, mcpServers: [] } });
    const sessionId = ((await raw.response(2)).result as { sessionId: string }).sessionId;
    raw.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "/sleep 1h" }] } });
    await waitUntil(() => fixture.berth.host.getSession(sessionId)!.turnActive, "the first turn runs");
    raw.send({ jsonrpc: "2.0", id: 4, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "me too" }] } });
    expect(await raw.response(4)).toMatchObject({ error: { code: -32600 } });
    raw.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    expect(await raw.response(3)).toMatchObject({ result: { stopReason: "cancelled" } });
    const started = () => fixture.berth.host.events(sessionId).filter((event) => event.kind === "turn_started").length;
    await waitUntil(() => started() === 2, "the refused prompt's turn is journaled after the first");
    // A later prompt's answer follows every event published before it: the refused prompt's turn_started included.
    raw.send({ jsonrpc: "2.0", id: 5, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "after" }] } });
    expect(await raw.response(5)).toMatchObject({ result: { stopReason: "end_turn" } });
    const shownAsUserMessage = raw.messages.filter(
      (message) =>
        message.method === "session/update" &&
        (message.params as { update: { sessionUpdate: string } }).update.sessionUpdate === "user_message_chunk",
    );
    expect(shownAsUserMessage).toEqual([]);
    await raw.close();
  });

  it("a socket closed while its agent is still starting releases its hold", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "200ms" } });
    const sessionId = (await fixture.berth.host.createSession({ cwd: fixture.workDir })).id;
    const raw = await RawSocket.open(fixture.acpUrl, fixture.token);
    raw.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await raw.response(1);
    raw.send({ jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId, cwd: fixture.workDir, mcpServers: [] } });
    await waitUntil(() => fixture.berth.host.getSession(sessionId)!.state === "acquiring", "the agent is being started");
    await raw.close();
    // The child arrives with no holder left: the release clock takes it away.
    await waitUntil(() => fixture.berth.host.recentRecords().some((r) => r.record.kind === "child_acquired"), "the agent started");
    await waitUntil(() => fixture.berth.host.getSession(sessionId)!.state === "childless", "the unheld agent was released");
    expect(fixture.berth.host.connections.size()).toBe(0);
  });

  it("replays a long journal to a client that reads slowly by waiting for it to have room, never cutting it", async () => {
    const fixture = await startFixture({ maxBufferedBytes: 1024 * 1024 });
    const { host } = fixture.berth;
    const sessionId = (await host.createSession({ cwd: fixture.workDir })).id;
    // 12 MB of history: twelve times what the host buffers for one client before cutting it.
    expect((await host.prompt(sessionId, [{ type: "text", text: "/flood 3000 4096" }])).stopReason).toBe("end_turn");

    const slow = await RawSocket.open(fixture.acpUrl, fixture.token);
    slow.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await slow.response(1);
    const tcp = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    const behind = new Promise<void>((resolve) => {
      const roomAgain = MessageLimitedSocket.prototype.roomAgain;
      vi.spyOn(MessageLimitedSocket.prototype, "roomAgain").mockImplementation(function (this: MessageLimitedSocket) {
        resolve();
        return roomAgain.call(this);
      });
    });
    const cut = new Promise<void>((resolve) => slow.ws.once("close", () => resolve()));
    slow.send({ jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId, cwd: fixture.workDir, mcpServers: [] } });
    // The client reads nothing until the host has either waited for it or cut it.
    tcp.pause();
    await Promise.race([behind, cut]);
    tcp.resume();

    await slow.response(2);
    expect(slow.ws.readyState).toBe(slow.ws.OPEN);
    const chunks = slow.messages.filter(
      (m) => (m.params as { update?: { sessionUpdate?: string; content?: { text?: string } } } | undefined)?.update?.content?.text?.length === 4096,
    );
    expect(chunks).toHaveLength(3000);
    await slow.close();
  });

  it("disconnects a client that stopped reading (it answers no ping), having queued no more than its share for it; the session carries on", async () => {
    const fixture = await startFixture({ maxBufferedBytes: 8 * 1024 * 1024 });
    const { host } = fixture.berth;
    const sessionId = (await host.createSession({ cwd: fixture.workDir })).id;
    const sleeper = await RawSocket.open(fixture.acpUrl, fixture.token);
    sleeper.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await sleeper.response(1);
    sleeper.send({ jsonrpc: "2.0", id: 2, method: "session/resume", params: { sessionId, cwd: fixture.workDir, mcpServers: [] } });
    await sleeper.response(2);
    expect(host.getSession(sessionId)!.holders).toBe(1);
    // The laptop is asleep: its socket stays open but nothing is read any more.
    (sleeper.ws as unknown as { _socket: { pause(): void } })._socket.pause();

    // The stream goes on without it (prompted on the host, so no other client competes for this test's event loop); what
    // it is not sent waits in the journal, not in the host's memory.
    expect((await host.prompt(sessionId, [{ type: "text", text: "/flood 2000 16384" }])).stopReason).toBe("end_turn");
    await waitUntil(() => host.getSession(sessionId)!.holders === 0, "the sleeper's hold is released");
    expect((await host.prompt(sessionId, [{ type: "text", text: "still here" }])).stopReason).toBe("end_turn");
  });
});
