import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client as clientApp, methods, ndJsonStream, RequestError, type McpServer, type ToolCallContent } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { afterEach, describe, expect, it } from "vitest";
import type { StampedRecord } from "../../src/host/host-records.js";
import { cleanUp, startFixture, tempDir, waitUntil, waitUntilGone, type AcpTestClient, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

function recordsOf(fixture: BerthFixture, kind: string): StampedRecord[] {
  return fixture.berth.host.recentRecords(1000).filter(({ record }) => record.kind === kind);
}

/** A demo agent that wants `authenticate` first, as the `locked` agent. */
function lockedAgent(): { command: string; args: string[] } {
  return { command: process.execPath, args: [demoAgentMain, "--state-dir", tempDir("berth-locked-agent-"), "--require-auth"] };
}

const login = { methodId: "demo-token", _meta: { "berth-demo/token": "s3cret" } };

function wipeConversations(stateDir: string): void {
  for (const file of readdirSync(stateDir)) rmSync(join(stateDir, file), { recursive: true, force: true });
}

async function childGone(fixture: BerthFixture, sessionId: string): Promise<void> {
  await waitUntil(() => fixture.berth.host.getSession(sessionId)?.pid === null, "the agent child to be released");
}

describe("ACP through Berth: what the agent offers reaches the client", () => {
  it("initialize answers with the agent's own answer plus Berth's additions, starting the agent once per command line", async () => {
    const fixture = await startFixture();
    const answer = (await fixture.connect()).initialized;
    expect(answer.agentInfo).toMatchObject({ name: "berth-demo-agent" });
    expect(answer.agentCapabilities).toMatchObject({
      loadSession: true,
      sessionCapabilities: { list: {}, resume: {}, close: {} },
      mcpCapabilities: { http: true },
    });
    expect(answer._meta).toMatchObject({ "berth/host": { name: "berth" } });
    // Records are seen once committed.
    await fixture.berth.host.committed();
    expect(recordsOf(fixture, "agent_asked").map(({ record }) => record)).toEqual([
      expect.objectContaining({ agent: "demo", purpose: "initialize" }),
    ]);

    // Another client, and the same host after a restart: the stored answer, no process started.
    await fixture.connect();
    await fixture.berth.host.committed();
    expect(recordsOf(fixture, "agent_asked")).toHaveLength(1);
    await fixture.stop();
    const again = await startFixture({ dataDir: fixture.dataDir, workDir: fixture.workDir });
    const before = recordsOf(again, "agent_asked").length;
    expect((await again.connect()).initialized.agentInfo).toMatchObject({ name: "berth-demo-agent" });
    await again.berth.host.committed();
    expect(recordsOf(again, "agent_asked")).toHaveLength(before);
  });

  it("an agent that cannot start still lets clients in: initialize says why, session/new fails naming it", async () => {
    const fixture = await startFixture({ config: { agents: { broken: { command: "/nonexistent/agent-binary" } } } });
    const client = await fixture.connect({ agent: "broken" });
    expect(client.initialized._meta).toMatchObject({ "berth/host": { agentUnavailable: expect.stringContaining('cannot start agent "broken"') } });
    await expect(client.newSession(fixture.workDir)).rejects.toThrow(/agent "broken"/);
    expect(await fixture.api("/healthz").then((r) => r.status)).toBe(200);
  });

  it("a request for no session goes to an agent process of its own, whose error comes back unchanged", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect();
    const error = await client.agent.request("_nobody/knows", { x: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).code).toBe(-32601);
    await waitUntil(
      () => recordsOf(fixture, "agent_asked").some(({ record }) => record.kind === "agent_asked" && record.method === "_nobody/knows"),
      "the request's record",
    );

    // With a session of that agent open, its running process answers: no other is started.
    const sessionId = await client.newSession(fixture.workDir);
    const asked = recordsOf(fixture, "agent_asked").length;
    expect(await client.agent.request("_berth-demo/echo", { y: 2 })).toEqual({ echoed: { y: 2 } });
    expect(recordsOf(fixture, "agent_asked")).toHaveLength(asked);
    expect(fixture.berth.host.getSession(sessionId)?.pid).not.toBeNull();
  });

  it("session/delete deletes Berth's session and stops its agent", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect();
    expect(client.initialized.agentCapabilities?.sessionCapabilities).toMatchObject({ delete: {} });
    const sessionId = await client.newSession(fixture.workDir);
    const pid = fixture.berth.host.getSession(sessionId)!.pid!;
    await client.agent.request(methods.agent.session.delete, { sessionId });
    expect(fixture.berth.host.getSession(sessionId)).toBeUndefined();
    expect((await client.agent.request(methods.agent.session.list, {})).sessions).toEqual([]);
    expect(await waitUntilGone([pid])).toEqual([]);
  });

  it("a tool call's terminal becomes the command's output, sent again as it grows; a client may ask for raw terminal ids", async () => {
    const fixture = await startFixture();
    const shown = await fixture.connect({ capabilities: { elicitation: { form: {} } } });
    const raw = await fixture.connect({ capabilities: { _meta: { "berth/rawTerminals": true } } });
    const sessionId = await shown.newSession(fixture.workDir);
    await raw.load(sessionId, fixture.workDir);
    const turn = shown.prompt(sessionId, "/run for i in 1 2 3; do echo line$i; sleep 1; done");

    const contents = (client: typeof shown): ToolCallContent[][] =>
      client.notifications.flatMap(({ update }) =>
        (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") && update.content ? [update.content] : [],
      );
    const texts = () =>
      contents(shown).flatMap((items) =>
        items.flatMap((item) => (item.type === "content" && item.content.type === "text" ? [item.content.text] : [])),
      );
    // While the command still runs, its output so far reaches the client that could not show a terminal.
    await waitUntil(() => texts().some((text) => text.includes("line1") && !text.includes("line3")), "partial output in the tool call");
    expect((await turn).stopReason).toBe("end_turn");
    await waitUntil(() => texts().some((text) => text.includes("line3")), "the whole output");
    expect(
      contents(shown)
        .flat()
        .some((item) => item.type === "terminal"),
    ).toBe(false);
    // The agent's own final output is the tool call's last content.
    expect(contents(shown).at(-1)).toEqual([{ type: "content", content: { type: "text", text: "line1\nline2\nline3\n" } }]);
    // The raw client got the terminal id, as the agent sent it.
    await waitUntil(
      () =>
        contents(raw)
          .flat()
          .some((item) => item.type === "terminal"),
      "the raw terminal content",
    );
  });

  it("a form question a client cannot show is left for the dashboard, and the client is told where to answer", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect({ capabilities: {} });
    const sessionId = await client.newSession(fixture.workDir);
    // The agent sees Berth's capabilities (forms included), so it asks; Berth keeps the question.
    const turn = client.prompt(sessionId, "/elicit Your name?");
    await waitUntil(() => fixture.berth.host.pendingQuestions(sessionId).length === 1, "the pending question");
    const [question] = fixture.berth.host.pendingQuestions(sessionId);
    await waitUntil(() => client.texts(sessionId).includes(`node dist/cli/main.js answer ${question!.id}`), "the notice naming the question");
    expect(client.elicitations).toHaveLength(0);
    await fixture.berth.host.answerQuestion(question!.id, { action: "accept", content: { answer: "Ada" } });
    expect((await turn).stopReason).toBe("end_turn");
  });

  it("a session the agent cannot reopen is created again at the agent: silently without turns; with turns, the history from the journal and a notice", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "50ms" } });
    const client = await fixture.connect();
    const fresh = await client.newSession(fixture.workDir);
    const talked = await client.newSession(fixture.workDir);
    await client.prompt(talked, "remember me");
    for (const sessionId of [fresh, talked]) await client.agent.request(methods.agent.session.close, { sessionId });
    await childGone(fixture, fresh);
    await childGone(fixture, talked);
    // The agent forgets every conversation.
    wipeConversations(join(fixture.dataDir, "agent-state", "demo"));

    await client.load(fresh, fixture.workDir);
    expect((await client.prompt(fresh, "hello again")).stopReason).toBe("end_turn");
    expect(client.texts(fresh)).not.toContain("could not reopen");

    // Another client loads the session with turns: Berth's history, then why the agent will not remember it.
    const later = await fixture.connect();
    await later.load(talked, fixture.workDir);
    await later.waitForText(talked, "Berth: the agent could not reopen this session (");
    expect(later.texts(talked, "user_message_chunk")).toBe("remember me");
    const notice = later.notifications.find(
      ({ update }) =>
        update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" && update.content.text.includes("could not reopen"),
    );
    expect(notice?.update).toMatchObject({
      _meta: { "berth/notice": { kind: "conversation_restarted", reason: expect.any(String), previousAgentSessionId: expect.any(String) } },
    });
    expect(later.texts(talked)).toContain("it starts a fresh conversation and does not remember what was said above.");
    // The fresh conversation answers the next prompt.
    expect((await later.prompt(talked, "hello again")).stopReason).toBe("end_turn");
    await later.waitForText(talked, "hello again");
  });

  it("a login is passed to the agent and replayed to each later child, so a session outlives the release of its process", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "50ms", agents: { locked: lockedAgent() } } });
    const client = await fixture.connect({ agent: "locked" });
    expect(client.initialized.authMethods).toMatchObject([{ id: "demo-token" }, { id: "demo-env", type: "env_var" }]);
    const refused = await client.newSession(fixture.workDir).catch((e: unknown) => e);
    // The agent's own auth-required error, code and data, that clients open their login flow on.
    expect(refused).toMatchObject({ code: -32000, data: { authMethods: ["demo-token", "demo-env"] } });
    expect(fixture.berth.host.listSessions()).toEqual([]);
    await expect(client.agent.request(methods.agent.authenticate, { methodId: "demo-token" })).rejects.toMatchObject({ code: -32602 });
    await client.agent.request(methods.agent.authenticate, login);

    const sessionId = await client.newSession(fixture.workDir);
    await client.prompt(sessionId, "before the release");
    await client.agent.request(methods.agent.session.close, { sessionId });
    await childGone(fixture, sessionId);
    await client.load(sessionId, fixture.workDir);
    expect(await client.prompt(sessionId, "after the release")).toMatchObject({ stopReason: "end_turn" });
    // The credential stays out of the journal and the records.
    const stored = JSON.stringify([fixture.berth.host.events(sessionId), fixture.berth.host.recentRecords(1000)]);
    expect(stored).not.toContain("s3cret");
  });

  it('with rememberLogins "file" a login survives a restart of the host, in a 0600 file', async () => {
    const agents = { locked: lockedAgent() };
    const fixture = await startFixture({ config: { rememberLogins: "file", agents } });
    const client = await fixture.connect({ agent: "locked" });
    await client.agent.request(methods.agent.authenticate, login);
    const sessionId = await client.newSession(fixture.workDir);
    await fixture.stop();
    const file = join(fixture.dataDir, "agent-logins.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ locked: { request: login, env: {} } });

    const again = await startFixture({ dataDir: fixture.dataDir, workDir: fixture.workDir, config: { rememberLogins: "file", agents } });
    const returning = await again.connect({ agent: "locked" });
    await returning.load(sessionId, fixture.workDir);
    expect(await returning.prompt(sessionId, "still logged in")).toMatchObject({ stopReason: "end_turn" });
  });

  it("the session's mode, model and options are set again on a new agent process that started afresh", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "50ms" } });
    const client = await fixture.connect();
    const sessionId = await client.newSession(fixture.workDir);
    await client.agent.request(methods.agent.session.setMode, { sessionId, modeId: "code" });
    await client.agent.request("session/set_model", { sessionId, modelId: "demo-large" });
    await client.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "verbosity", value: "terse" });
    await client.agent.request(methods.agent.session.close, { sessionId });
    await childGone(fixture, sessionId);
    // The agent forgets the conversation: the new process starts it afresh, in its default mode.
    wipeConversations(join(fixture.dataDir, "agent-state", "demo"));

    const answer = await client.load(sessionId, fixture.workDir);
    expect(answer).toMatchObject({
      modes: { currentModeId: "code" },
      models: { currentModelId: "demo-large" },
      configOptions: [{ id: "verbosity", currentValue: "terse" }],
    });
    await client.prompt(sessionId, "/mode");
    await client.waitForText(sessionId, "code");
  });

  it("a client that loads or resumes a session is told the agent's commands once, the latest, however many processes the session had", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "50ms" } });
    const creator = await fixture.connect();
    const sessionId = await creator.newSession(fixture.workDir);
    await creator.prompt(sessionId, "hello");
    await creator.close();
    await childGone(fixture, sessionId);
    const told = async (client: AcpTestClient) => {
      // The agent announces its commands before it reads the next request: a turn's answer comes after them.
      await client.prompt(sessionId, "/mode");
      return client.notifications.filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === "available_commands_update");
    };
    const latest = () => ({
      sessionUpdate: "available_commands_update",
      availableCommands: fixture.berth.host.agentState(sessionId).availableCommands,
    });

    // A second process, which announces its commands again.
    const coldLoader = await fixture.connect();
    await coldLoader.load(sessionId, fixture.workDir);
    expect((await told(coldLoader)).map((n) => n.update)).toEqual([latest()]);
    const warmLoader = await fixture.connect();
    await warmLoader.load(sessionId, fixture.workDir);
    expect((await told(warmLoader)).map((n) => n.update)).toEqual([latest()]);
    const warmResumer = await fixture.connect();
    await warmResumer.agent.request(methods.agent.session.resume, { sessionId, cwd: fixture.workDir, mcpServers: [] });
    expect((await told(warmResumer)).map((n) => n.update)).toEqual([latest()]);
    await Promise.all([coldLoader.close(), warmLoader.close(), warmResumer.close()]);
    await childGone(fixture, sessionId);

    // A third process, which announces them as Berth tells the resuming client what the last one did.
    const coldResumer = await fixture.connect();
    await coldResumer.agent.request(methods.agent.session.resume, { sessionId, cwd: fixture.workDir, mcpServers: [] });
    expect((await told(coldResumer)).map((n) => n.update)).toEqual([latest()]);
    // Each process announced the same commands: the journal keeps the first announcement only.
    const journal = (await (await fixture.api(`/api/sessions/${sessionId}/events`)).json()) as {
      events: { payload: { update?: { sessionUpdate: string } } }[];
    };
    expect(journal.events.filter((event) => event.payload.update?.sessionUpdate === "available_commands_update")).toHaveLength(1);
  });

  it("a mode or option one client sets reaches the session's other clients: announced by Berth when the agent did not, once when it did", async () => {
    const silent = { command: process.execPath, args: [demoAgentMain, "--state-dir", tempDir("berth-silent-agent-"), "--silent-settings"] };
    const fixture = await startFixture({ config: { agents: { silent } } });
    const updatesOf = (client: AcpTestClient, sessionId: string, kind: string) =>
      client.notifications.filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind).map((n) => n.update);
    // A turn's answer follows every update journaled before it: what a client was sent by then is all it gets.
    const settled = async (sessionId: string, ...clients: AcpTestClient[]) => {
      for (const client of clients) await client.prompt(sessionId, "/mode");
    };

    for (const agent of ["silent", "demo"]) {
      const setter = await fixture.connect({ agent });
      const sessionId = await setter.newSession(fixture.workDir);
      const other = await fixture.connect({ agent });
      await other.load(sessionId, fixture.workDir);
      await setter.agent.request(methods.agent.session.setMode, { sessionId, modeId: "code" });
      const { configOptions } = await setter.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "verbosity",
        value: "terse",
      });
      await settled(sessionId, setter, other);

      const mode = { sessionUpdate: "current_mode_update", currentModeId: "code" };
      const options = { sessionUpdate: "config_option_update", configOptions };
      expect(updatesOf(other, sessionId, "current_mode_update")).toEqual([mode]);
      expect(updatesOf(other, sessionId, "config_option_update")).toEqual([options]);
      // The client that asked gets what the agent sent it, as directly: from opencode (silent) nothing.
      expect(updatesOf(setter, sessionId, "current_mode_update")).toEqual(agent === "silent" ? [] : [mode]);
      expect(updatesOf(setter, sessionId, "config_option_update")).toEqual(agent === "silent" ? [] : [options]);
      // Journaled like the agent's own: a later load replays it.
      const later = await fixture.connect({ agent });
      await later.load(sessionId, fixture.workDir);
      expect(updatesOf(later, sessionId, "current_mode_update")).toEqual([mode]);
      expect(updatesOf(later, sessionId, "config_option_update")).toEqual([options]);
    }
  });

  it("a new child reopens the session with the MCP servers of the client that reopened it last; another directory is refused", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "50ms" } });
    const creator = await fixture.connect();
    const server = (name: string): McpServer => ({ type: "http", name, url: `http://127.0.0.1:9/${name}`, headers: [] });
    const sessionId = (await creator.agent.request(methods.agent.session.new, { cwd: fixture.workDir, mcpServers: [server("from-creator")] }))
      .sessionId;
    await creator.prompt(sessionId, "/mcp-servers");
    await creator.waitForText(sessionId, "from-creator");
    await creator.close();
    await childGone(fixture, sessionId);

    const loader = await fixture.connect();
    await expect(
      loader.agent.request(methods.agent.session.load, { sessionId, cwd: tempDir("berth-elsewhere-"), mcpServers: [] }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("reopen it there"),
    });
    await loader.agent.request(methods.agent.session.load, { sessionId, cwd: fixture.workDir, mcpServers: [server("from-loader")] });
    const replayed = loader.texts(sessionId).length;
    await loader.prompt(sessionId, "/mcp-servers");
    await waitUntil(() => loader.texts(sessionId).slice(replayed).includes("from-loader"), "the loader's servers");
    expect(loader.texts(sessionId).slice(replayed)).not.toContain("from-creator");
  });

  it("a connection bound to an agent lists that agent's sessions only", async () => {
    const fixture = await startFixture({
      config: { agents: { other: { command: process.execPath, args: [demoAgentMain, "--state-dir", tempDir("berth-other-agent-")] } } },
    });
    const demo = await fixture.connect({ agent: "demo" });
    const other = await fixture.connect({ agent: "other" });
    const unbound = await fixture.connect();
    const demoSession = await demo.newSession(fixture.workDir);
    const otherSession = await other.newSession(fixture.workDir);
    const listed = async (c: typeof demo) => (await c.agent.request(methods.agent.session.list, {})).sessions.map((s) => s.sessionId);
    expect(await listed(demo)).toEqual([demoSession]);
    expect(await listed(other)).toEqual([otherSession]);
    expect((await listed(unbound)).sort()).toEqual([demoSession, otherSession].sort());
    expect(fixture.berth.host.getSession(otherSession)?.agent).toBe("other");
  });

  it("the agent's extension request goes to the session's clients; the first success answers it", async () => {
    const fixture = await startFixture();
    // A client that knows the method, beside the harness's client that does not (it answers -32601).
    const knowing = clientApp({ name: "knowing" }).onRequest("*", ({ method, params }) => ({ from: "knowing", method, params }));
    const connection = knowing.connect(createWebSocketStream(fixture.acpUrl, { WebSocket, headers: { authorization: `Bearer ${fixture.token}` } }));
    await connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const ignorant = await fixture.connect();
    const sessionId = await ignorant.newSession(fixture.workDir);
    await connection.agent.request(methods.agent.session.resume, { sessionId, cwd: fixture.workDir });
    await ignorant.prompt(sessionId, '/ext _team/ask {"q":1}');
    await ignorant.waitForText(sessionId, '_team/ask answered: {"from":"knowing","method":"_team/ask","params":{"q":1}}');
    // A third client that never answers has its copy withdrawn once the first answered.
    let withdrawn = false;
    const slow = clientApp({ name: "slow" }).onRequest(
      "*",
      ({ signal }) => new Promise((resolve) => signal.addEventListener("abort", () => resolve((withdrawn = true)))),
    );
    const slowConnection = slow.connect(createWebSocketStream(fixture.acpUrl, { WebSocket, headers: { authorization: `Bearer ${fixture.token}` } }));
    await slowConnection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    await slowConnection.agent.request(methods.agent.session.resume, { sessionId, cwd: fixture.workDir });
    await ignorant.prompt(sessionId, '/ext _team/ask {"q":2}');
    await waitUntil(() => withdrawn, "the slow client's copy withdrawn");
    slowConnection.close();
    connection.close();
    // With only a client that cannot answer, the agent gets that client's -32601.
    await ignorant.prompt(sessionId, "/ext _team/ask {}");
    await ignorant.waitForText(sessionId, "_team/ask failed with code -32601");
  });

  it("an environment-variable login: the client hands over the method's variables, every child of the agent is started with them", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "50ms", agents: { locked: lockedAgent() } } });
    const client = await fixture.connect({ agent: "locked" });
    const envLogin = (env: Record<string, unknown>) =>
      client.agent.request(methods.agent.authenticate, { methodId: "demo-env", _meta: { "berth/env": env } });
    // Only the variables the agent's method names reach its environment.
    await expect(envLogin({ LD_PRELOAD: "/tmp/x.so" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('takes no variable "LD_PRELOAD"'),
    });
    await expect(client.agent.request(methods.agent.authenticate, { methodId: "demo-env" })).rejects.toMatchObject({ code: -32602 });
    // A value no environment can hold is refused by name; the value itself (a secret) is in no answer.
    const refused = await envLogin({ BERTH_DEMO_ENV_TOKEN: "se\0cret" }).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: -32602,
      message: expect.stringContaining('variable "BERTH_DEMO_ENV_TOKEN" must not contain a NUL character'),
    });
    expect(JSON.stringify(refused)).not.toContain("cret");
    await envLogin({ BERTH_DEMO_ENV_TOKEN: "k3y" });

    const sessionId = await client.newSession(fixture.workDir);
    await client.prompt(sessionId, "first");
    await client.agent.request(methods.agent.session.close, { sessionId });
    await childGone(fixture, sessionId);
    await client.load(sessionId, fixture.workDir);
    expect(await client.prompt(sessionId, "after the release")).toMatchObject({ stopReason: "end_turn" });
    expect(JSON.stringify([fixture.berth.host.events(sessionId), fixture.berth.host.recentRecords(1000)])).not.toContain("k3y");
  });

  it("berth connect hands an environment-variable method's values from its own environment", async () => {
    const fixture = await startFixture({ config: { agents: { locked: lockedAgent() } } });
    const bridge = spawn(
      process.execPath,
      [join(import.meta.dirname, "../../dist/cli/main.js"), "connect", "--url", fixture.url, "--token", fixture.token, "--agent", "locked"],
      {
        stdio: ["pipe", "pipe", "inherit"],
        env: { ...process.env, BERTH_DEMO_ENV_TOKEN: "from-the-editor" },
      },
    );
    const connection = clientApp({ name: "editor" }).connect(
      ndJsonStream(Writable.toWeb(bridge.stdin) as WritableStream<Uint8Array>, Readable.toWeb(bridge.stdout) as ReadableStream<Uint8Array>),
    );
    try {
      await connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      await connection.agent.request(methods.agent.authenticate, { methodId: "demo-env" });
      const { sessionId } = await connection.agent.request(methods.agent.session.new, { cwd: fixture.workDir, mcpServers: [] });
      expect(fixture.berth.host.getSession(sessionId)?.agent).toBe("locked");
    } finally {
      connection.close();
      bridge.stdin.end();
      await new Promise((resolve) => (bridge.exitCode === null ? bridge.once("exit", resolve) : resolve(undefined)));
    }
  });

  describe("an agent that never answers", () => {
    const misbehaving = { command: process.execPath, args: [join(import.meta.dirname, "../host/fixtures/misbehaving-agent.mjs")] };
    const askedPids = (fixture: BerthFixture) =>
      recordsOf(fixture, "agent_asked").flatMap(({ record }) => (record.kind === "agent_asked" ? [record.pid] : []));

    it("a client that gives up on a request outside any session: the agent process started for it is stopped", async () => {
      const fixture = await startFixture({ config: { agents: { mute: misbehaving } } });
      const client = await fixture.connect({ agent: "mute" });
      const before = askedPids(fixture).length;
      const giveUp = new AbortController();
      const pending = client.agent.request("_x/slow", {}, { cancellationSignal: giveUp.signal }).catch((e: unknown) => e);
      await waitUntil(() => askedPids(fixture).length > before, "the agent process for the request");
      const pid = askedPids(fixture).at(-1)!;
      giveUp.abort();
      await pending;
      expect(await waitUntilGone([pid])).toEqual([]);
    });

    it("a session request whose client left holds nothing; a host that stops stops the agent processes it started for requests", async () => {
      const fixture = await startFixture({ config: { agents: { mute: misbehaving } } });
      const leaving = await fixture.connect({ agent: "mute" });
      const sessionId = await leaving.newSession(fixture.workDir);
      void leaving.agent.request("_x/slow", { sessionId }).catch(() => undefined);
      await waitUntil(() => fixture.berth.host.getSession(sessionId)?.holders === 1, "the client's hold");
      await leaving.close();
      await waitUntil(() => fixture.berth.host.getSession(sessionId)?.holders === 0, "no holder left");

      const staying = await fixture.connect({ agent: "mute" });
      const before = askedPids(fixture).length;
      void staying.agent.request("_x/slow", {}).catch(() => undefined);
      await waitUntil(() => askedPids(fixture).length > before, "the agent process for the request");
      const pid = askedPids(fixture).at(-1)!;
      await fixture.stop();
      expect(await waitUntilGone([pid])).toEqual([]);
    });
  });
});
