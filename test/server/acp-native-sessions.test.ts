import { join } from "node:path";
import Database from "better-sqlite3";
import { methods, type ListSessionsResponse, type SessionNotification } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { REQUEST_CHILDREN_PER_AGENT } from "../../src/host/transient-child.js";
import { processIsRunning } from "../support/process-table.js";
import { DemoAgentProcess } from "../agents/demo-agent-process.js";
import { capturedLog, cleanUp, startFixture, tempDir, waitUntil, type AcpTestClient, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

/** A conversation made directly with the fixture's demo agent, outside Berth, in the same state dir: a native session. */
async function nativeConversation(fixture: BerthFixture, prompt: string): Promise<string> {
  const { agent } = await DemoAgentProcess.start({ stateDir: join(fixture.dataDir, "agent-state", "demo") });
  try {
    const sessionId = await agent.newSession(fixture.workDir);
    await agent.prompt(sessionId, prompt);
    return sessionId;
  } finally {
    await agent.stop();
  }
}

async function list(client: AcpTestClient, params: { cwd?: string; cursor?: string }): Promise<ListSessionsResponse> {
  return (await client.agent.request(methods.agent.session.list, params)) as ListSessionsResponse;
}

function load(client: AcpTestClient, sessionId: string, cwd: string) {
  return client.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
}

/** The text of the message chunks of one kind `client` was sent for the session. */
function texts(client: AcpTestClient, sessionId: string, kind: "user_message_chunk" | "agent_message_chunk"): string[] {
  return client.notifications
    .filter((n: SessionNotification) => n.sessionId === sessionId && n.update.sessionUpdate === kind)
    .flatMap((n) => {
      const update = n.update as { content?: { type: string; text?: string } };
      return update.content?.type === "text" && update.content.text !== undefined ? [update.content.text] : [];
    });
}

describe("ACP session/list and session/load of the agent's own sessions (made outside Berth)", () => {
  it("lists the agent's own sessions of the directory, marked berth/native, without those Berth has", async () => {
    const fixture = await startFixture();
    const nativeId = await nativeConversation(fixture, "hello from outside");
    const client = await fixture.connect({ agent: "demo" });
    const ownId = await client.newSession(fixture.workDir);
    // Its conversation is in the agent's state dir too, under the agent's own id: listed once, as Berth's.
    await client.agent.request(methods.agent.session.prompt, { sessionId: ownId, prompt: [{ type: "text", text: "from Berth" }] });
    expect(fixture.berth.host.getSession(ownId)).toBeDefined();

    const { sessions } = await list(client, { cwd: fixture.workDir });
    expect(sessions.map((session) => session.sessionId).sort()).toEqual([nativeId, ownId].sort());
    expect(sessions.find((session) => session.sessionId === nativeId)).toMatchObject({
      cwd: fixture.workDir,
      title: "hello from outside",
      updatedAt: expect.any(String),
      _meta: { "berth/agent": "demo", "berth/native": true },
    });
    expect(sessions.find((session) => session.sessionId === ownId)?._meta).not.toHaveProperty("berth/native");

    // Another directory has none of them; an unbound connection without cwd lists Berth's only.
    expect((await list(client, { cwd: tempDir("berth-native-elsewhere-") })).sessions).toEqual([]);
    const unbound = await fixture.connect();
    expect((await list(unbound, {})).sessions.map((session) => session.sessionId)).toEqual([ownId]);
  });

  it("session/load of a native id imports it under the same id, journaling the history the agent replays; later loads use it", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "50ms" } });
    const nativeId = await nativeConversation(fixture, "remember the tide");
    const first = await fixture.connect({ agent: "demo" });

    const answer = await load(first, nativeId, fixture.workDir);
    expect(answer).toMatchObject({ modes: expect.anything() });
    expect(fixture.berth.host.getSession(nativeId)).toMatchObject({ id: nativeId, agent: "demo", cwd: fixture.workDir, title: "remember the tide" });
    // The agent's replay reaches the loading client through the journal, before the load's answer (as any load's history).
    expect(texts(first, nativeId, "user_message_chunk")).toEqual(["remember the tide"]);
    expect(texts(first, nativeId, "agent_message_chunk").join("")).toContain("remember the tide");
    // The journal (what the dashboard reads) holds it.
    const journal = (await (await fixture.api(`/api/sessions/${nativeId}/events?merge=chunks`)).json()) as {
      events: { kind: string; payload: { update?: { sessionUpdate: string; content?: { text?: string } } } }[];
    };
    expect(journal.events.map((event) => event.payload.update).filter((update) => update?.sessionUpdate === "user_message_chunk")).toEqual([
      expect.objectContaining({ content: expect.objectContaining({ text: "remember the tide" }) }),
    ]);

    // Now Berth's own: listed once, unmarked.
    const listed = (await list(first, { cwd: fixture.workDir })).sessions.filter((session) => session.sessionId === nativeId);
    expect(listed).toHaveLength(1);
    expect(listed[0]?._meta).not.toHaveProperty("berth/native");

    // A prompt in it continues the agent's own conversation.
    await first.agent.request(methods.agent.session.prompt, { sessionId: nativeId, prompt: [{ type: "text", text: "and the moon" }] });
    await first.close();
    await waitUntil(() => fixture.berth.host.getSession(nativeId)?.pid === null, "the imported session's child to be released");

    // A cold load: the agent replays again, but that history is journaled already: each message once.
    const second = await fixture.connect({ agent: "demo" });
    await load(second, nativeId, fixture.workDir);
    await expect.poll(() => texts(second, nativeId, "user_message_chunk")).toEqual(["remember the tide", "and the moon"]);
    expect(fixture.berth.host.listSessions().filter((session) => session.id === nativeId)).toHaveLength(1);
  });

  it("session/load of a native id while the store cannot write: answered after writeTimeout, with a warning; the history follows once stored", async () => {
    const { log, lines } = capturedLog();
    // writeTimeout bounds every write of this host: long enough for a loaded machine, short enough to wait out once.
    const fixture = await startFixture({ config: { writeTimeout: "1s" }, log });
    const { host } = fixture.berth;
    const nativeId = await nativeConversation(fixture, "remember the tide");
    const client = await fixture.connect({ agent: "demo" });
    // Another connection takes the write lock once the import is stored and the client holds the session, before the
    // agent replays the history: the writer waits for it.
    const other = new Database(join(fixture.dataDir, "berth.sqlite"));
    const stopWatching = host.onSessionChanged((sessionId) => {
      if (sessionId === nativeId && !other.inTransaction && (host.getSession(sessionId)?.holders ?? 0) > 0) other.exec("BEGIN IMMEDIATE");
    });
    try {
      await load(client, nativeId, fixture.workDir);
      expect(other.inTransaction).toBe(true);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          msg: "session opened before its history was stored",
          sessionId: nativeId,
          connectionId: expect.any(String),
        }),
      );
      expect(texts(client, nativeId, "user_message_chunk")).toEqual([]);
    } finally {
      stopWatching();
      if (other.inTransaction) other.exec("ROLLBACK");
      other.close();
    }
    await expect.poll(() => texts(client, nativeId, "user_message_chunk")).toEqual(["remember the tide"]);
    expect(texts(client, nativeId, "agent_message_chunk").join("")).toContain("remember the tide");
  });

  it("session/resume of a native id imports it too, on an unbound connection for the default agent", async () => {
    const fixture = await startFixture();
    const nativeId = await nativeConversation(fixture, "resume me");
    const client = await fixture.connect();
    await client.agent.request(methods.agent.session.resume, { sessionId: nativeId, cwd: fixture.workDir, mcpServers: [] });
    expect(fixture.berth.host.getSession(nativeId)).toMatchObject({ agent: "demo", cwd: fixture.workDir });
    await expect.poll(() => texts(client, nativeId, "user_message_chunk")).toEqual(["resume me"]);
    const { stopReason } = await client.agent.request(methods.agent.session.prompt, {
      sessionId: nativeId,
      prompt: [{ type: "text", text: "more" }],
    });
    expect(stopReason).toBe("end_turn");
  });

  it("two clients loading the same native id at once: one import, both open it, each told the history once", async () => {
    const fixture = await startFixture();
    const nativeId = await nativeConversation(fixture, "both of us");
    const [a, b] = await Promise.all([fixture.connect({ agent: "demo" }), fixture.connect({ agent: "demo" })]);
    await Promise.all([load(a, nativeId, fixture.workDir), load(b, nativeId, fixture.workDir)]);
    expect(fixture.berth.host.listSessions().map((session) => session.id)).toEqual([nativeId]);
    await expect.poll(() => texts(a, nativeId, "user_message_chunk")).toEqual(["both of us"]);
    await expect.poll(() => texts(b, nativeId, "user_message_chunk")).toEqual(["both of us"]);
  });

  it("session/load of an id neither Berth nor the agent knows is -32002, and imports nothing", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect({ agent: "demo" });
    await expect(load(client, "no-such-session", fixture.workDir)).rejects.toMatchObject({ code: -32002 });
    expect(fixture.berth.host.listSessions()).toEqual([]);
  });

  it.each(["fail", "hang"] as const)("an agent whose session/list does %s leaves Berth's list intact", async (how) => {
    const stateDir = tempDir("berth-native-agent-");
    const fixture = await startFixture({
      config: { agents: { lister: { command: process.execPath, args: [demoAgentMain, "--state-dir", stateDir, "--list-sessions", how] } } },
    });
    const client = await fixture.connect({ agent: "lister" });
    const ownId = await client.newSession(fixture.workDir);
    const { sessions } = await list(client, { cwd: fixture.workDir });
    expect(sessions.map((session) => session.sessionId)).toEqual([ownId]);
    // Loading an id Berth does not know stays "not found", and the host keeps serving.
    await expect(load(client, "unknown-native", fixture.workDir)).rejects.toMatchObject({ code: -32002 });
    expect(await fixture.api("/healthz").then((r) => r.status)).toBe(200);
  });

  it("a burst of loads of unknown ids: one question to the agent per directory, at most REQUEST_CHILDREN_PER_AGENT agent processes at once; every load answers -32002", async () => {
    const stateDir = tempDir("berth-native-agent-");
    const fixture = await startFixture({
      config: { agents: { lister: { command: process.execPath, args: [demoAgentMain, "--state-dir", stateDir, "--list-sessions", "hang"] } } },
    });
    // Each child is asked when it has started; those asked before it that still run are running beside it.
    const asked: number[] = [];
    let mostAtOnce = 0;
    fixture.berth.host.onRecord(({ record }) => {
      if (record.kind !== "agent_asked" || record.method !== methods.agent.session.list) return;
      asked.push(record.pid);
      mostAtOnce = Math.max(mostAtOnce, asked.filter(processIsRunning).length);
    });
    const client = await fixture.connect({ agent: "lister" });

    // Loads in one directory share the agent's list of it.
    const sameDir = Array.from({ length: 3 }, (_, i) => load(client, `unknown-${i}`, fixture.workDir));
    for (const answer of await Promise.allSettled(sameDir)) expect(answer).toMatchObject({ status: "rejected", reason: { code: -32002 } });
    expect(asked).toHaveLength(1);

    // Loads in as many directories each ask: no more children at once than the slots.
    asked.length = 0;
    const dirs = Array.from({ length: REQUEST_CHILDREN_PER_AGENT + 2 }, () => tempDir("berth-native-dir-"));
    const loads = dirs.map((dir, i) => load(client, `unknown-elsewhere-${i}`, dir));
    for (const answer of await Promise.allSettled(loads)) expect(answer).toMatchObject({ status: "rejected", reason: { code: -32002 } });
    // A load still waiting for a slot when its list's time is up answers without asking: at most all of them asked.
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.length).toBeLessThanOrEqual(REQUEST_CHILDREN_PER_AGENT + 2);
    expect(mostAtOnce).toBeLessThanOrEqual(REQUEST_CHILDREN_PER_AGENT);
    expect(fixture.berth.host.listSessions()).toEqual([]);
  }, 60_000);
});
