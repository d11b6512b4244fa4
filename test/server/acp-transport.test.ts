import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { capturedLog, cleanUp, startFixture, tempDir, upgradeOutcome, waitUntil, waitUntilGone, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

const initialize = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } };

/** `POST /acp` of a Streamable HTTP `initialize`, by hand. */
function postInitialize(fixture: BerthFixture, headers: Record<string, string>, query = "", signal?: AbortSignal): Promise<Response> {
  return fetch(`${fixture.url}/acp${query}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(initialize),
    signal,
  });
}

/** The status and body of a refused WebSocket upgrade. */
function refusedUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once("open", () => {
      ws.close();
      reject(new Error("the upgrade was accepted"));
    });
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body });
        ws.terminate();
      });
    });
    ws.once("error", (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

/** The host's log lines that name a connection: what each says, of which connection (and transport). */
function connectionLines(lines: ReadonlyArray<Record<string, unknown>>) {
  return lines
    .filter((line) => line.connectionId !== undefined)
    .map(({ msg, connectionId, transport }) => ({ msg, connectionId, ...(transport === undefined ? {} : { transport }) }));
}

describe("ACP over Streamable HTTP on /acp", () => {
  it("the SDK's HTTP client initializes, creates a session, prompts it and gets its updates; disconnecting releases the hold", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect({ transport: "http" });
    const sessionId = await client.newSession(fixture.workDir, { "berth/agent": "demo" });
    expect(fixture.berth.host.getSession(sessionId)).toMatchObject({ agent: "demo", holders: 1, state: "live" });

    expect(await client.prompt(sessionId, "hello over http")).toMatchObject({ stopReason: "end_turn" });
    // The response comes after the turn's updates, on HTTP as on WebSocket.
    expect(client.texts(sessionId)).toBe("hello over http");
    expect(await client.prompt(sessionId, ", again")).toMatchObject({ stopReason: "end_turn" });
    expect(client.texts(sessionId)).toBe("hello over http, again");
    expect(await fixture.api("/metrics").then((r) => r.text())).toContain("berth_clients_connected 1");

    // The SDK's close sends DELETE /acp; the connection's holds go with it.
    await client.close();
    await waitUntil(() => fixture.berth.host.getSession(sessionId)?.holders === 0, "the HTTP connection's hold was released");
    // The connection stops counting as its cleanup starts.
    expect(await fixture.api("/metrics").then((r) => r.text())).toContain("berth_clients_connected 0");
  });

  it("names the connection with Acp-Connection-Id, its log lines with the same id, and DELETE of it releases the connection's holds", async () => {
    const { log, lines } = capturedLog();
    const fixture = await startFixture({ log });
    const auth = { authorization: `Bearer ${fixture.token}` };
    const initialized = await postInitialize(fixture, auth);
    expect(initialized.status).toBe(200);
    const connectionId = initialized.headers.get("acp-connection-id");
    expect(connectionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await initialized.json()).toMatchObject({ id: 0, result: { protocolVersion: PROTOCOL_VERSION } });

    const post = (message: unknown) =>
      fetch(`${fixture.url}/acp`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", "acp-connection-id": connectionId! },
        body: JSON.stringify(message),
      });
    expect((await post({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: fixture.workDir, mcpServers: [] } })).status).toBe(202);
    await waitUntil(() => fixture.berth.host.listSessions().some((s) => s.holders === 1 && s.state === "live"), "the session is held");
    const [session] = fixture.berth.host.listSessions();

    const deleted = await fetch(`${fixture.url}/acp`, { method: "DELETE", headers: { ...auth, "acp-connection-id": connectionId! } });
    expect(deleted.status).toBe(202);
    await waitUntil(() => fixture.berth.host.getSession(session!.id)?.holders === 0, "DELETE released the hold");
    expect((await post({ jsonrpc: "2.0", id: 2, method: "session/list", params: {} })).status).toBe(404);
    await waitUntil(() => lines.some((line) => line.msg === "client disconnected"), "the disconnection was logged");
    expect(connectionLines(lines)).toEqual([
      { msg: "client connected", connectionId, transport: "http" },
      { msg: "client created a session", connectionId },
      { msg: "client disconnected", connectionId, transport: "http" },
    ]);
  });

  it("closes the connection of a client that vanished without DELETE (no request, no event stream) after httpClientIdleMs, releasing its holds", async () => {
    const { log, lines } = capturedLog();
    // Long enough for a client on a loaded machine to send its next request after the one before.
    const fixture = await startFixture({ log, httpClientIdleMs: 1_000 });
    const auth = { authorization: `Bearer ${fixture.token}` };
    /** A connection that holds a new session; its event stream open if asked. */
    const holding = async (withStream: boolean) => {
      const connectionId = (await postInitialize(fixture, auth)).headers.get("acp-connection-id")!;
      const headers = { ...auth, "acp-connection-id": connectionId };
      const stream = new AbortController();
      if (withStream) {
        const opened = await fetch(`${fixture.url}/acp`, { headers: { ...headers, accept: "text/event-stream" }, signal: stream.signal });
        expect(opened.status).toBe(200);
      }
      const before = new Set(fixture.berth.host.listSessions().map((s) => s.id));
      const params = { cwd: fixture.workDir, mcpServers: [] };
      const created = await fetch(`${fixture.url}/acp`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/new", params }),
      });
      expect(created.status).toBe(202);
      await waitUntil(() => fixture.berth.host.listSessions().some((s) => !before.has(s.id) && s.holders === 1), "the session is held");
      const sessionId = fixture.berth.host.listSessions().find((s) => !before.has(s.id))!.id;
      return { connectionId, headers, sessionId, cutStream: () => stream.abort() };
    };
    const listening = await holding(true);
    const vanished = await holding(false);
    // Without a stream and quiet, the second is gone after the idle time; the first, as quiet but with its stream open, stays.
    await waitUntil(() => fixture.berth.host.getSession(vanished.sessionId)?.holders === 0, "the vanished client's hold was released");
    expect(fixture.berth.host.getSession(listening.sessionId)?.holders).toBe(1);
    expect(lines.filter((line) => line.msg === "client gone: no request or event stream open")).toEqual([
      expect.objectContaining({ connectionId: vanished.connectionId, idleMs: 1_000 }),
    ]);
    // Its stream cut and nothing sent since: gone too; its connection is closed.
    listening.cutStream();
    await waitUntil(() => fixture.berth.host.getSession(listening.sessionId)?.holders === 0, "the cut client's hold was released");
    const after = await fetch(`${fixture.url}/acp`, {
      method: "POST",
      headers: { ...listening.headers, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/list", params: {} }),
    });
    expect(after.status).toBe(404);
  });

  it("names a connection whose initialize the client gave up on, answered with no Acp-Connection-Id: its initialize's log line carries an id", async () => {
    const { log, lines } = capturedLog();
    // An agent that writes its pid once started, and never answers initialize.
    const started = join(tempDir("berth-mute-"), "pid");
    const mute = { command: "sh", args: ["-c", 'echo $$ > "$0"; exec sleep 3600', started] };
    const fixture = await startFixture({ log, config: { initializeTimeout: "2s", agents: { mute } } });
    const giveUp = new AbortController();
    const initializing = postInitialize(fixture, { authorization: `Bearer ${fixture.token}` }, "?agent=mute", giveUp.signal);
    await waitUntil(() => existsSync(started) && readFileSync(started, "utf8").endsWith("\n"), "the agent was started for the initialize");
    // The client gives up while Berth waits for the agent's own answer: the SDK answers 499, with no connection id.
    giveUp.abort();
    await expect(initializing).rejects.toThrow();
    await waitUntil(
      () => lines.some((line) => line.msg === "agent did not answer initialize; clients get Berth's own answer"),
      "the initialize's log line",
    );
    expect(lines.find((line) => line.msg === "agent did not answer initialize; clients get Berth's own answer")).toMatchObject({
      agent: "mute",
      connectionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(await waitUntilGone([Number(readFileSync(started, "utf8"))])).toEqual([]);
  });

  it("refuses a wrong token and a foreign Origin, as on WebSocket", async () => {
    const fixture = await startFixture();
    expect((await postInitialize(fixture, {})).status).toBe(401);
    expect((await postInitialize(fixture, { authorization: "Bearer wrong" })).status).toBe(401);
    await expect(fixture.connect({ transport: "http", token: "wrong" })).rejects.toThrow(/401/);

    const foreign = await postInitialize(fixture, { authorization: `Bearer ${fixture.token}`, origin: "http://127.0.0.1:1" });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ error: "forbidden_origin" });
    expect(await upgradeOutcome(fixture.acpUrl, { authorization: `Bearer ${fixture.token}`, origin: "http://127.0.0.1:1" })).toBe(403);
    // The server's own pages may.
    expect((await postInitialize(fixture, { authorization: `Bearer ${fixture.token}`, origin: fixture.url })).status).toBe(200);
    expect(fixture.berth.host.listSessions()).toEqual([]);
  });

  it("answers a POST larger than the message limit with a JSON-RPC error, and the connection carries on", async () => {
    const fixture = await startFixture({ maxMessageBytes: 64 * 1024 });
    const client = await fixture.connect({ transport: "http" });
    const sessionId = await client.newSession(fixture.workDir);
    const refused = client.prompt(sessionId, "x".repeat(100 * 1024));
    await expect(refused).rejects.toMatchObject({ data: { status: 413, body: { error: { code: -32600, data: { limit: 64 * 1024 } } } } });
    await expect(refused).rejects.toThrow(/more than the limit of 65536 bytes/);
    expect(await client.prompt(sessionId, "still here")).toMatchObject({ stopReason: "end_turn" });
    expect(client.texts(sessionId)).toBe("still here");
  });
});

describe("Streamable HTTP: bad input gets a JSON-RPC error, and the connection carries on", () => {
  it("answers an overlong session or request id, a body nested too deep and one that is garbage or binary; the SDK's client and the host stay usable", async () => {
    const fixture = await startFixture();
    const auth = { authorization: `Bearer ${fixture.token}` };
    const initialized = await postInitialize(fixture, auth);
    const connectionId = initialized.headers.get("acp-connection-id")!;
    const headers = { ...auth, "content-type": "application/json", "acp-connection-id": connectionId };
    const post = async (body: string | Uint8Array, extra: Record<string, string> = {}) => {
      const res = await fetch(`${fixture.url}/acp`, { method: "POST", headers: { ...headers, ...extra }, body });
      expect(res.headers.get("content-type")).toBe("application/json");
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const long = "s".repeat(2_000);
    const limit = { limit: 1024 };

    const prompt = { jsonrpc: "2.0", id: 7, method: "session/prompt", params: { sessionId: long, prompt: [] } };
    expect(await post(JSON.stringify(prompt), { "acp-session-id": long })).toEqual({
      status: 400,
      body: {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32602, message: "Invalid params: the session id is 2000 characters long, more than the limit of 1024", data: limit },
      },
    });
    expect(await post(JSON.stringify({ jsonrpc: "2.0", id: "i".repeat(1_500), method: "session/list", params: {} }))).toEqual({
      status: 400,
      body: {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "Invalid request: the request id is 1500 characters long, more than the limit of 1024", data: limit },
      },
    });
    // Nested 6,000 deep: refused with the request's id before the SDK walks it.
    const deep = "[".repeat(6_000) + "]".repeat(6_000);
    expect(await post(`{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[],"_meta":{"x":${deep}}}}`)).toEqual({
      status: 400,
      body: {
        jsonrpc: "2.0",
        id: 9,
        error: {
          code: -32600,
          message: "Invalid request: the message nests objects and arrays more than 64 levels deep, the limit",
          data: { limit: 64 },
        },
      },
    });
    expect(await post("this is not json {")).toEqual({
      status: 400,
      body: {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: expect.stringMatching(/^Parse error: the request body is not valid JSON \(Unexpected token/) },
      },
    });
    // Cut off: the parser's own words say what is wrong where.
    expect(await post('{"jsonrpc":"2.0",')).toEqual({
      status: 400,
      body: {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: expect.stringMatching(/^Parse error: the request body is not valid JSON \(.+\)$/) },
      },
    });
    for (const bytes of [new Uint8Array([0, 255, 1, 2, 200, 13, 10]), new Uint8Array([0xc3, 0x28, 0xa0, 0xa1])]) {
      expect(await post(bytes)).toEqual({
        status: 400,
        body: { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the request body is binary data, not JSON" } },
      });
    }
    // A session stream for an overlong id: 409, which fails that session, not the connection.
    const stream = await fetch(`${fixture.url}/acp`, {
      headers: { ...auth, accept: "text/event-stream", "acp-connection-id": connectionId, "acp-session-id": long },
    });
    expect(stream.status).toBe(409);
    expect(await stream.json()).toMatchObject({ error: { code: -32602, data: limit } });

    // The same connection still works, and a first message that is garbage opens nothing.
    const list = await fetch(`${fixture.url}/acp`, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 8, method: "session/list", params: {} }),
    });
    expect(list.status).toBe(202);
    const garbageFirst = await fetch(`${fixture.url}/acp`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: "\u0000garbage",
    });
    expect(garbageFirst.status).toBe(400);
    expect(garbageFirst.headers.get("acp-connection-id")).toBeNull();

    // Through the SDK's own HTTP client: the overlong id fails that request only.
    const client = await fixture.connect({ transport: "http" });
    await expect(client.prompt(long, "hello")).rejects.toMatchObject({ data: { status: 409, body: { error: { code: -32602, data: limit } } } });
    const sessionId = await client.newSession(fixture.workDir);
    expect(await client.prompt(sessionId, "still here")).toMatchObject({ stopReason: "end_turn" });
    expect(client.texts(sessionId)).toBe("still here");
  });
});

describe("/acp?agent=ID binds a connection to an agent", () => {
  it("accepts a configured agent on both profiles and refuses an unknown one with 400 naming the configured agents", async () => {
    const fixture = await startFixture();
    for (const transport of ["websocket", "http"] as const) {
      const client = await fixture.connect({ transport, agent: "demo" });
      const sessionId = await client.newSession(fixture.workDir);
      expect(await client.prompt(sessionId, `bound over ${transport}`)).toMatchObject({ stopReason: "end_turn" });
      expect(client.texts(sessionId)).toBe(`bound over ${transport}`);
    }

    const auth = { authorization: `Bearer ${fixture.token}` };
    const upgrade = await refusedUpgrade(`${fixture.acpUrl}?agent=nope`, auth);
    expect(upgrade.status).toBe(400);
    expect(JSON.parse(upgrade.body)).toEqual({ error: "unknown_agent", message: 'unknown agent "nope" (configured agents: demo)' });
    const post = await postInitialize(fixture, auth, "?agent=nope");
    expect(post.status).toBe(400);
    expect(await post.json()).toEqual({ error: "unknown_agent", message: 'unknown agent "nope" (configured agents: demo)' });
    // The token is checked first: a stranger learns nothing of the agents.
    expect(await upgradeOutcome(`${fixture.acpUrl}?agent=nope`, {})).toBe(401);
  });
});

describe("ACP over WebSocket follows the transport proposal", () => {
  it("names the connection with Acp-Connection-Id on the 101 response, and its log lines with the same id", async () => {
    const { log, lines } = capturedLog();
    const fixture = await startFixture({ log });
    const ws = new WebSocket(fixture.acpUrl, { headers: { authorization: `Bearer ${fixture.token}` } });
    let connectionId: string | undefined;
    ws.once("upgrade", (res) => (connectionId = res.headers["acp-connection-id"] as string | undefined));
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    expect(connectionId).toMatch(/^[0-9a-f-]{36}$/);
    ws.send(JSON.stringify({ ...initialize, id: 1 }));
    const response = await new Promise<Record<string, unknown>>((resolve) =>
      ws.once("message", (data) => resolve(JSON.parse(data.toString()) as Record<string, unknown>)),
    );
    expect(response).toMatchObject({ id: 1, result: { protocolVersion: PROTOCOL_VERSION } });
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: fixture.workDir, mcpServers: [] } }));
    await waitUntil(() => lines.some((line) => line.msg === "client created a session"), "the session was created");
    await new Promise((resolve) => {
      ws.once("close", resolve);
      ws.close();
    });
    await waitUntil(() => lines.some((line) => line.msg === "client disconnected"), "the disconnection was logged");
    expect(connectionLines(lines)).toEqual([
      { msg: "client connected", connectionId, transport: "websocket" },
      { msg: "client created a session", connectionId },
      { msg: "client disconnected", connectionId, transport: "websocket" },
    ]);
  });
});
