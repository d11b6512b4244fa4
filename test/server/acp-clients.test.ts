import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { cleanUp, processIsRunning, startFixture, waitUntil, waitUntilGone, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

async function view(fixture: BerthFixture, sessionId: string): Promise<SessionView> {
  const response = await fixture.api(`/api/sessions/${sessionId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as SessionView;
}

describe("ACP over WebSocket: clients sharing sessions", () => {
  it("two clients on one session both receive every update; a question answered by one is withdrawn from the other", async () => {
    const fixture = await startFixture();
    const alice = await fixture.connect();
    const bob = await fixture.connect();
    const sessionId = await alice.newSession(fixture.workDir);
    await bob.load(sessionId, fixture.workDir);
    expect(await view(fixture, sessionId)).toMatchObject({ holders: 2, state: "live" });

    expect(await alice.prompt(sessionId, "hello from alice")).toMatchObject({ stopReason: "end_turn" });
    await bob.waitForText(sessionId, "hello from alice");
    expect(alice.texts(sessionId)).toBe("hello from alice");
    expect(bob.texts(sessionId)).toBe("hello from alice");
    // Bob sees the prompt he did not send; Alice is not echoed her own.
    expect(bob.texts(sessionId, "user_message_chunk")).toBe("hello from alice");
    expect(alice.texts(sessionId, "user_message_chunk")).toBe("");

    const turn = alice.prompt(sessionId, "/ask Deploy to production?");
    await waitUntil(() => alice.permissions.length === 1 && bob.permissions.length === 1, "both clients were asked");
    const [asked] = bob.permissions;
    expect(asked!.params.sessionId).toBe(sessionId);
    expect(asked!.params.toolCall.title).toBe("Deploy to production?");
    asked!.answer({ outcome: { outcome: "selected", optionId: "allow" } });

    // Alice's copy of the request is withdrawn with $/cancel_request.
    await waitUntil(() => alice.permissions[0]!.signal.aborted, "alice's request was cancelled");
    expect(bob.permissions[0]!.signal.aborted).toBe(false);
    expect(await turn).toMatchObject({ stopReason: "end_turn" });
    await bob.waitForText(sessionId, "You chose: allow");
    expect(alice.texts(sessionId)).toContain("You chose: allow");
    expect((await fixture.api(`/api/questions?sessionId=${sessionId}`).then((r) => r.json())) as unknown).toEqual({ questions: [] });
  });

  it("a disconnected client's agent stays for the grace; reconnecting in time finds the same process and the whole history", async () => {
    const fixture = await startFixture({ config: { releaseGrace: "1500ms" } });
    const first = await fixture.connect();
    const sessionId = await first.newSession(fixture.workDir);
    await first.prompt(sessionId, "first message");
    await first.prompt(sessionId, "second message");
    const { pid } = await view(fixture, sessionId);
    expect(pid).not.toBeNull();

    await first.close();
    // The hold is gone but the child is kept warm: a release clock is armed, not a kill.
    await waitUntil(() => fixture.berth.host.getSession(sessionId)?.holders === 0, "the hold was released");
    const unheld = await view(fixture, sessionId);
    expect(unheld).toMatchObject({ state: "live", pid, holders: 0 });
    expect(unheld.releaseAt).not.toBeNull();

    const again = await fixture.connect();
    await again.load(sessionId, fixture.workDir);
    expect(await view(fixture, sessionId)).toMatchObject({ state: "live", pid, holders: 1, releaseAt: null });
    expect(again.texts(sessionId, "user_message_chunk")).toBe("first messagesecond message");
    expect(again.texts(sessionId)).toBe("first messagesecond message");
    expect(await again.prompt(sessionId, "third")).toMatchObject({ stopReason: "end_turn" });

    await again.close();
    expect(await waitUntilGone([pid!], 15_000)).toEqual([]);
    await waitUntil(() => fixture.berth.host.getSession(sessionId)!.state === "childless", "the release finished");
    expect(await view(fixture, sessionId)).toMatchObject({ state: "childless", pid: null, holders: 0 });
  });

  it("a question left when its only client disconnected is answered over REST, and the turn completes", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect();
    const sessionId = await client.newSession(fixture.workDir);
    const turn = client.prompt(sessionId, "/ask Delete the branch?");
    turn.catch(() => undefined);
    await waitUntil(() => client.permissions.length === 1, "the client was asked");
    await client.close();

    const { questions } = (await fixture.api(`/api/questions?sessionId=${sessionId}`).then((r) => r.json())) as {
      questions: Array<{ id: string; kind: string }>;
    };
    expect(questions).toHaveLength(1);
    expect(questions[0]!.kind).toBe("permission");
    const answer = await fixture.api(`/api/questions/${questions[0]!.id}/answer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ optionId: "deny" }),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ id: questions[0]!.id, state: "answered" });

    // The turn settles before its end is committed (the journal writes in batches): wait for the stored record itself.
    await waitUntil(() => fixture.berth.host.events(sessionId).at(-1)?.kind === "turn_ended", "the turn's end was stored");
    expect(fixture.berth.host.getSession(sessionId)!.turnActive).toBe(false);
    expect(fixture.berth.host.events(sessionId).at(-1)).toMatchObject({ kind: "turn_ended", payload: { stopReason: "end_turn", error: null } });

    const later = await fixture.connect();
    await later.load(sessionId, fixture.workDir);
    expect(later.texts(sessionId)).toContain("You chose: deny");
    expect(later.permissions).toHaveLength(0);
  });

  it("a question asked while no client is connected is re-asked of the client that loads the session", async () => {
    const fixture = await startFixture();
    const sessionId = (await fixture.berth.host.createSession({ cwd: fixture.workDir })).id;
    // No client at all: the turn is started on the host, as a script or an operator would.
    const turn = fixture.berth.host.prompt(sessionId, [{ type: "text", text: "/ask Run the migration?" }]);
    await waitUntil(() => fixture.berth.host.pendingQuestions(sessionId).length === 1, "the question is pending");

    const client = await fixture.connect();
    await client.load(sessionId, fixture.workDir);
    await waitUntil(() => client.permissions.length === 1, "the loading client was asked");
    client.permissions[0]!.answer({ outcome: { outcome: "selected", optionId: "allow" } });
    expect(await turn).toMatchObject({ stopReason: "end_turn" });
    await client.waitForText(sessionId, "You chose: allow");
  });

  it("a second server on the same data directory lists and loads the sessions of the first", async () => {
    const first = await startFixture();
    const client = await first.connect();
    const sessionId = await client.newSession(first.workDir);
    await client.prompt(sessionId, "remember this");
    const { pid } = await view(first, sessionId);
    await first.stop();
    expect(await waitUntilGone([pid!])).toEqual([]);

    const second = await startFixture({ dataDir: first.dataDir, workDir: first.workDir });
    const rest = (await second.api("/api/sessions").then((r) => r.json())) as { sessions: SessionView[] };
    expect(rest.sessions.map((s) => s.id)).toEqual([sessionId]);
    expect(rest.sessions[0]).toMatchObject({ state: "childless", title: "remember this" });

    const returning = await second.connect();
    const listed = await returning.agent.request(methods.agent.session.list, {});
    expect(listed.sessions).toEqual([
      expect.objectContaining({ sessionId, cwd: first.workDir, title: "remember this", updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }),
    ]);
    await returning.load(sessionId, first.workDir);
    // The history, and the word that the first host's shutdown stopped the agent the client held.
    expect(returning.texts(sessionId)).toMatch(/^remember thisBerth stopped this session's agent \(reason: shutdown\)/);
    expect(await returning.prompt(sessionId, "and this")).toMatchObject({ stopReason: "end_turn" });
    const reloaded = await view(second, sessionId);
    expect(reloaded.pid).not.toBe(pid);
    expect(processIsRunning(reloaded.pid!)).toBe(true);
  });

  it("session/close releases this client's hold only; session/resume holds without replaying", async () => {
    const fixture = await startFixture();
    const a = await fixture.connect();
    const b = await fixture.connect();
    const sessionId = await a.newSession(fixture.workDir, { "berth/agent": "demo", "berth/workspace": "ws-1" });
    expect(await view(fixture, sessionId)).toMatchObject({ workspace: "ws-1", agent: "demo" });
    await a.prompt(sessionId, "history");
    const resumed = await b.agent.request(methods.agent.session.resume, { sessionId, cwd: fixture.workDir });
    // No history: only what the agent announced about the session (its commands), and its state in the answer.
    await waitUntil(() => b.notifications.length > 0, "the session's commands");
    expect(b.notifications.map((n) => n.update.sessionUpdate)).toEqual(["available_commands_update"]);
    expect(resumed).toMatchObject({ modes: { currentModeId: "ask" }, models: { currentModelId: "demo-small" } });
    expect(await view(fixture, sessionId)).toMatchObject({ holders: 2 });

    await a.agent.request(methods.agent.session.close, { sessionId });
    expect(await view(fixture, sessionId)).toMatchObject({ holders: 1, state: "live" });
    await expect(a.prompt(sessionId, "after close")).rejects.toThrow(/not open on this connection/);
    expect(await b.prompt(sessionId, "still here")).toMatchObject({ stopReason: "end_turn" });
    expect(a.texts(sessionId)).toBe("history");
  });

  it("session/cancel interrupts the running turn, recorded with reason user", async () => {
    const fixture = await startFixture();
    const a = await fixture.connect();
    const sessionId = await a.newSession(fixture.workDir);
    const turn = a.prompt(sessionId, "/sleep 1h");
    await a.waitForText(sessionId, "Sleeping for 1h.");
    await a.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await turn).toMatchObject({ stopReason: "cancelled" });
    expect(fixture.berth.host.recentRecords().map((r) => r.record)).toContainEqual(
      expect.objectContaining({ kind: "session_interrupted", sessionId, reason: "user" }),
    );
  });
});
