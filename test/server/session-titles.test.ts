import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { cleanUp, startFixture, waitUntil, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

async function rename(fixture: BerthFixture, sessionId: string, body: unknown): Promise<Response> {
  return fixture.api(`/api/sessions/${sessionId}`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const titleUpdates = (notifications: { sessionId: string; update: { sessionUpdate: string } }[], sessionId: string) =>
  notifications.filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === "session_info_update").map((n) => n.update);

describe("PATCH /api/sessions/:id: a session renamed", () => {
  it("is stored, told to every client holding it as session_info_update, listed, and replayed to a client that loads it later", async () => {
    const fixture = await startFixture();
    const holder = await fixture.connect();
    const sessionId = await holder.newSession(fixture.workDir);
    await holder.prompt(sessionId, "first words");
    expect(fixture.berth.host.getSession(sessionId)?.title).toBe("first words");

    const response = await rename(fixture, sessionId, { title: "  Fix the\nlogin   bug " });
    expect(response.status).toBe(200);
    expect(((await response.json()) as SessionView).title).toBe("Fix the login bug");
    expect(((await (await fixture.api(`/api/sessions/${sessionId}`)).json()) as SessionView).title).toBe("Fix the login bug");
    await waitUntil(() => titleUpdates(holder.notifications, sessionId).length === 1, "the holder is told");
    expect(titleUpdates(holder.notifications, sessionId)).toEqual([{ sessionUpdate: "session_info_update", title: "Fix the login bug" }]);

    const { sessions } = await holder.agent.request(methods.agent.session.list, {});
    expect(sessions.find((s) => s.sessionId === sessionId)?.title).toBe("Fix the login bug");

    // The next prompt does not take the title back.
    await holder.prompt(sessionId, "more words");
    expect(fixture.berth.host.getSession(sessionId)?.title).toBe("Fix the login bug");

    const later = await fixture.connect();
    await later.load(sessionId, fixture.workDir);
    expect(titleUpdates(later.notifications, sessionId)).toEqual([{ sessionUpdate: "session_info_update", title: "Fix the login bug" }]);

    // Cleared: null, and the next prompt titles the session again.
    expect(((await (await rename(fixture, sessionId, { title: null })).json()) as SessionView).title).toBeNull();
    await waitUntil(() => titleUpdates(holder.notifications, sessionId).length === 2, "the clearing is told");
    expect(titleUpdates(holder.notifications, sessionId)[1]).toEqual({ sessionUpdate: "session_info_update", title: null });
    await holder.prompt(sessionId, "named again");
    expect(fixture.berth.host.getSession(sessionId)?.title).toBe("named again");
  });

  it("refuses what cannot be a title, naming why, and an unknown session", async () => {
    const fixture = await startFixture();
    const session = await fixture.berth.host.createSession({ cwd: fixture.workDir });
    const refusal = async (body: unknown) => {
      const response = await rename(fixture, session.id, body);
      return { status: response.status, ...((await response.json()) as { error: string; message: string }) };
    };
    expect(await refusal({ title: " \n " })).toEqual({
      status: 400,
      error: "invalid_title",
      message: "a title must not be empty (send null to clear it)",
    });
    expect(await refusal({ title: "x".repeat(201) })).toMatchObject({
      status: 400,
      error: "invalid_title",
      message: "a title must be at most 200 characters, got 201",
    });
    expect(await refusal({ title: 7 })).toMatchObject({
      status: 400,
      error: "invalid_body",
      message: expect.stringContaining("title: expected a title (a string) or null"),
    });
    expect(await refusal({})).toMatchObject({ status: 400, error: "invalid_body" });
    expect(await refusal({ title: "ok", colour: "red" })).toMatchObject({
      status: 400,
      error: "invalid_body",
      message: expect.stringContaining('unknown field "colour"'),
    });
    expect((await rename(fixture, "no-such-session", { title: "x" })).status).toBe(404);
    // 200 characters (counted as characters, not UTF-16 units) is fine.
    expect(((await (await rename(fixture, session.id, { title: `${"é".repeat(199)}🚢` })).json()) as SessionView).title).toHaveLength(201);
    expect(fixture.berth.host.getSession(session.id)?.title).toBe(`${"é".repeat(199)}🚢`);
  });
});

describe("a session's preview", () => {
  it("is the last agent message's last words, passing over the turn's end after it, else the last prompt", async () => {
    const fixture = await startFixture();
    const host = fixture.berth.host;
    const session = await host.createSession({ cwd: fixture.workDir });
    expect(host.getSession(session.id)?.preview).toBeNull();

    await host.prompt(session.id, [{ type: "text", text: "Hello there" }]);
    await waitUntil(() => host.getSession(session.id)?.preview?.text === "Hello there", "the echo is the preview");
    expect(host.getSession(session.id)?.preview).toMatchObject({ role: "agent", text: "Hello there" });

    // A long reply: its last 160 characters, on one line, marked as cut.
    await host.prompt(session.id, [{ type: "text", text: `${"a".repeat(300)}\n\nthe   end` }]);
    await waitUntil(() => host.getSession(session.id)?.preview?.text.endsWith("the end") === true, "the long reply's end");
    const cut = host.getSession(session.id)!.preview!;
    expect(cut.text.startsWith("…")).toBe(true);
    expect([...cut.text]).toHaveLength(160);
    expect(cut.text).not.toContain("\n");

    // A turn whose reply is a tool call and no text: its prompt is the last message.
    await host.prompt(session.id, [{ type: "text", text: "/run true" }]);
    await waitUntil(() => host.getSession(session.id)?.preview?.role === "user", "the tool turn's prompt");
    const afterTool = host.getSession(session.id)!.preview!;
    expect(afterTool).toMatchObject({ role: "user", text: "/run true" });

    // Through REST too.
    const listed = (await (await fixture.api("/api/sessions")).json()) as { sessions: SessionView[] };
    expect(listed.sessions.find((s) => s.id === session.id)?.preview).toEqual(afterTool);
  });

  it("is plain words: Markdown's marks and HTML tags left out, of the agent's reply and of a prompt", async () => {
    const fixture = await startFixture();
    const host = fixture.berth.host;
    const session = await host.createSession({ cwd: fixture.workDir });
    await host.prompt(session.id, [
      { type: "text", text: "# Report\n\n- [x] **fixed** the `cart.ts` <b>totals</b>\n- [ ] see [the docs](https://example.com)" },
    ]);
    await waitUntil(() => host.getSession(session.id)?.preview?.role === "agent", "the echo is the preview");
    expect(host.getSession(session.id)?.preview?.text).toBe("Report fixed the cart.ts totals see the docs");
  });

  it("is the prompt while the agent has said nothing after it", async () => {
    const fixture = await startFixture();
    const host = fixture.berth.host;
    const session = await host.createSession({ cwd: fixture.workDir });
    // The demo agent asks for permission before it says anything.
    const turn = host.prompt(session.id, [{ type: "text", text: "/ask Deploy?" }]);
    await waitUntil(() => host.pendingQuestions(session.id).length === 1, "the agent asks");
    expect(host.getSession(session.id)?.preview).toMatchObject({ role: "user", text: "/ask Deploy?" });
    await host.cancel(session.id);
    await turn;
  });
});

describe("a session's title, made or given", () => {
  it("is made from the first prompt's words; the agent's own title replaces it; a person's name outlasts the agent's", async () => {
    const fixture = await startFixture();
    const holder = await fixture.connect();
    const sessionId = await holder.newSession(fixture.workDir);
    const title = () => fixture.berth.host.getSession(sessionId)?.title;

    await holder.prompt(sessionId, "# Refactor plan for `cart.ts`\n\nHere is what I found. The totals round twice.");
    expect(title()).toBe("Refactor plan for cart.ts");

    // The demo agent's `/title` sends session_info_update: the title, stored and listed.
    await holder.prompt(sessionId, "/title Cart rounding fix");
    expect(title()).toBe("Cart rounding fix");
    const listed = (await (await fixture.api("/api/sessions")).json()) as { sessions: SessionView[] };
    expect(listed.sessions.find((s) => s.id === sessionId)?.title).toBe("Cart rounding fix");

    expect((await rename(fixture, sessionId, { title: "Mine" })).status).toBe(200);
    await holder.prompt(sessionId, "/title The agent's second name");
    expect(title()).toBe("Mine");

    // The person clears their name: the agent's latest shows again, and stays after a restart.
    expect(((await (await rename(fixture, sessionId, { title: null })).json()) as SessionView).title).toBe("The agent's second name");
    await fixture.stop();
    const restarted = await startFixture({ dataDir: fixture.dataDir, workDir: fixture.workDir });
    expect(restarted.berth.host.getSession(sessionId)?.title).toBe("The agent's second name");
  });
});
