import { methods, RequestError } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { cleanUp, startFixture, tempDir, waitUntil, type AcpTestClient } from "./server-harness.js";

afterEach(cleanUp);

const FORK = "session/fork";

interface ForkAnswer {
  sessionId: string;
  modes?: { currentModeId: string };
}

function fork(client: AcpTestClient, sessionId: string, cwd: string): Promise<ForkAnswer> {
  return client.agent.request(FORK, { sessionId, cwd, mcpServers: [] }) as Promise<ForkAnswer>;
}

async function failure(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RequestError);
  const { code, message } = error as RequestError;
  return { code, message };
}

describe("session/fork through Berth", () => {
  it("forks into a new session with the history so far, on the agent's own fork of the conversation", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect();
    expect(client.initialized.agentCapabilities?.sessionCapabilities).toMatchObject({ fork: {} });
    const original = await client.newSession(fixture.workDir);
    await client.prompt(original, "first words");
    await client.prompt(original, "second words");

    const answer = await fork(client, original, fixture.workDir);
    expect(answer.sessionId).not.toBe(original);
    expect(answer.modes?.currentModeId).toBeDefined();
    const forked = answer.sessionId;
    expect(fixture.berth.host.getSession(forked)).toMatchObject({ agent: "demo", cwd: fixture.workDir });
    // Its history is the original's, so is its title: a prompt of its own is not its first and does not change it.
    expect(fixture.berth.host.getSession(forked)?.title).toBe("first words");

    // Its copied journal is stored by the time of the answer: the dashboard's read of it has both turns.
    const page = (await (await fixture.api(`/api/sessions/${forked}/events?merge=chunks`)).json()) as {
      events: { kind: string; payload: unknown }[];
    };
    expect(page.events.filter((event) => event.kind === "turn_started").map((event) => JSON.stringify(event.payload))).toEqual([
      expect.stringContaining("first words"),
      expect.stringContaining("second words"),
    ]);

    // Another client loading the fork sees the copied history.
    const other = await fixture.connect();
    await other.load(forked, fixture.workDir);
    await other.waitForText(forked, "second words");
    expect(other.texts(forked)).toContain("first words");

    // The fork's agent remembers both prompts, and what is said in the fork stays there.
    await client.prompt(forked, "/history");
    await client.waitForText(forked, "2 prompts before this one");
    await client.prompt(forked, "only in the fork");
    await client.waitForText(forked, "only in the fork");
    expect(fixture.berth.host.getSession(forked)?.title).toBe("first words");
    const journalText = (sessionId: string) => JSON.stringify(fixture.berth.host.events(sessionId));
    expect(journalText(forked)).toContain("only in the fork");
    expect(journalText(original)).not.toContain("only in the fork");

    // The original keeps working on its own conversation, in its own process.
    await client.prompt(original, "/history");
    await client.waitForText(original, "2 prompts before this one");
    expect(fixture.berth.host.getSession(forked)?.pid).not.toBe(fixture.berth.host.getSession(original)?.pid);
  });

  it("the fork is held and released like any session, and its agent conversation outlives its process", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "50ms" } });
    const client = await fixture.connect();
    const original = await client.newSession(fixture.workDir);
    await client.prompt(original, "remember this");
    const forked = (await fork(client, original, fixture.workDir)).sessionId;
    await client.close();
    await waitUntil(() => fixture.berth.host.getSession(forked)?.pid === null, "the fork's agent to be released");

    // A cold load starts a child that loads the agent's fork: it still remembers the prompt.
    const later = await fixture.connect();
    await later.load(forked, fixture.workDir);
    await later.waitForText(forked, "remember this");
    await later.prompt(forked, "/history");
    await later.waitForText(forked, "1 prompts before this one");
  });

  it("refuses a session that does not exist or is not open on the connection, as other session methods do", async () => {
    const fixture = await startFixture();
    const owner = await fixture.connect();
    const stranger = await fixture.connect();
    const sessionId = await owner.newSession(fixture.workDir);

    const unknown = await failure(fork(stranger, "no-such-session", fixture.workDir));
    expect(unknown).toEqual(await failure(stranger.prompt("no-such-session", "hi")));
    const notOpen = await failure(fork(stranger, sessionId, fixture.workDir));
    expect(notOpen).toEqual(await failure(stranger.prompt(sessionId, "hi")));
    expect(notOpen.message).toMatch(/not open on this connection/);

    const elsewhere = await failure(fork(owner, sessionId, tempDir("berth-fork-elsewhere-")));
    expect(elsewhere.message).toMatch(/fork it there/);
    expect(fixture.berth.host.listSessions().map((view) => view.id)).toEqual([sessionId]);
  });

  it("an agent that cannot fork is not advertised as one, and session/fork is not found", async () => {
    const stateDir = tempDir("berth-fork-noload-");
    const fixture = await startFixture({
      config: { agents: { plain: { command: process.execPath, args: [demoAgentMain, "--state-dir", stateDir, "--no-load"] } } },
    });
    const client = await fixture.connect({ agent: "plain" });
    expect(client.initialized.agentCapabilities?.sessionCapabilities).not.toHaveProperty("fork");
    const sessionId = await client.newSession(fixture.workDir, { "berth/agent": "plain" });
    expect((await failure(fork(client, sessionId, fixture.workDir))).code).toBe(-32601);
    expect(fixture.berth.host.listSessions().map((view) => view.id)).toEqual([sessionId]);
    // The session carries on.
    await client.prompt(sessionId, "still here");
    await client.waitForText(sessionId, "still here");
    expect((await client.agent.request(methods.agent.session.list, {})).sessions).toHaveLength(1);
  });
});
