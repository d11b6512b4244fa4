import { methods, type ListSessionsResponse } from "@agentclientprotocol/sdk";
import { afterAll, describe, expect, it } from "vitest";
import { DirectAgent, stopAllDirectAgents } from "../../support/real-agents.js";
import type { AgentUnderTest } from "./agent-under-test.js";
import { opencode } from "./agents/opencode.js";
import { useDataDir, useWorld } from "./scenarios.js";

/**
 * Issue 25, item 7 with real opencode: a session opencode made directly (over its own stdio, outside Berth) in a
 * directory is listed by Berth's `session/list` for that directory, marked `_meta["berth/native"]`, and
 * `session/load` of it imports it under its own id, with the history opencode replays journaled.
 */

/** The agent as the world prepares it, remembering its config entry so the test can also run it directly. */
function remembered(agent: AgentUnderTest): { agent: AgentUnderTest; entry: () => Awaited<ReturnType<AgentUnderTest["prepare"]>> } {
  let entry: Awaited<ReturnType<AgentUnderTest["prepare"]>> | undefined;
  const prepare: AgentUnderTest["prepare"] = async (options) => (entry = await agent.prepare(options));
  return { agent: { ...agent, prepare }, entry: () => entry! };
}

describe.skipIf(!opencode.available())("opencode: its own sessions through Berth", { timeout: 240_000 }, () => {
  const { agent, entry } = remembered(opencode);
  const world = useWorld(agent, useDataDir(agent));
  afterAll(stopAllDirectAgents);

  it("a session opencode made directly in the directory is listed, marked berth/native, and loading it imports it", async () => {
    const w = world();
    const tag = w.play([{ text: "Made outside Berth." }]);
    // opencode run directly, as an editor would run it, in the same home and directory.
    const direct = await DirectAgent.start({ name: "opencode", cwd: w.cwd, entry: entry() });
    const { sessionId: nativeId } = await direct.newSession(w.cwd);
    const directPrompt = `${tag} a conversation outside Berth`;
    expect((await direct.promptSettled(nativeId, directPrompt)).ok).toBe(true);
    await direct.stop();

    const client = await w.connect({ agent: agent.id });
    // A running child answers Berth's session/list within its 3 s; one started for it takes longer on a loaded machine.
    await client.newSession(w.cwd);
    const { sessions } = (await client.agent.request(methods.agent.session.list, { cwd: w.cwd })) as ListSessionsResponse;
    expect(
      sessions.find((s) => s.sessionId === nativeId),
      JSON.stringify(sessions),
    ).toMatchObject({
      sessionId: nativeId,
      cwd: w.cwd,
      _meta: { "berth/agent": agent.id, "berth/native": true },
    });
    expect((await w.sessions()).map((s) => s.id)).not.toContain(nativeId);

    await client.load(nativeId, w.cwd);
    // Imported under its own id, with the history opencode replayed journaled.
    expect(await w.session(nativeId)).toMatchObject({ id: nativeId, agent: agent.id, cwd: w.cwd });
    expect(client.texts(nativeId, "user_message_chunk")).toContain(directPrompt);
    expect(client.texts(nativeId)).toContain("Made outside Berth.");
    const { events } = await w.api<{ events: { kind: string; payload: { update?: { sessionUpdate: string; content?: { text?: string } } } }[] }>(
      `/api/sessions/${nativeId}/events?merge=chunks`,
    );
    const journaled = events.map((e) => e.payload.update).filter((u) => u?.sessionUpdate === "agent_message_chunk");
    expect(journaled.map((u) => u!.content?.text).join("")).toContain("Made outside Berth.");
    // From then on it is a Berth session: listed once, without berth/native.
    const again = (await client.agent.request(methods.agent.session.list, { cwd: w.cwd })) as ListSessionsResponse;
    const listed = again.sessions.filter((s) => s.sessionId === nativeId);
    expect(listed).toHaveLength(1);
    expect(listed[0]!._meta).not.toHaveProperty("berth/native");
  });
});
