import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { StampedRecord } from "../../src/host/host-records.js";
import type { QuestionView, SessionView } from "../../src/host/views.js";
import type { JournalEvent } from "../../src/store/events.js";
import type { Store } from "../../src/store/store.js";
import { cleanUp, startFixture, tempDir, waitUntil, waitUntilGone, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

const body = (value: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: typeof value === "string" ? value : JSON.stringify(value),
});

async function json<T>(response: Promise<Response> | Response): Promise<{ status: number; body: T }> {
  const res = await response;
  return { status: res.status, body: (await res.json()) as T };
}

async function createSession(fixture: BerthFixture, input: Record<string, unknown> = { cwd: fixture.workDir }): Promise<SessionView> {
  const created = await json<SessionView>(fixture.api("/api/sessions", body(input)));
  expect(created.status).toBe(201);
  return created.body;
}

/** Reads a Server-Sent Events response as it arrives. */
class EventReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private text = "";

  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }

  get frames(): string[] {
    return this.text.split("\n\n").filter((frame) => frame !== "");
  }

  /** Reads until `enough` holds of the frames so far; fails, showing them, if it does not within `timeoutMs`. */
  async until(enough: (frames: string[]) => boolean, timeoutMs = 10_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    while (!enough(this.frames)) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the expected events did not arrive within ${timeoutMs} ms; frames so far:\n${this.frames.join("\n\n")}`)),
          Math.max(0, deadline - Date.now()),
        );
      });
      try {
        const { value, done } = await Promise.race([this.reader.read(), timedOut]);
        if (done) throw new Error("the event stream ended");
        this.text += this.decoder.decode(value, { stream: true });
      } finally {
        clearTimeout(timer);
      }
    }
    return this.frames;
  }

  close(): Promise<void> {
    return this.reader.cancel();
  }
}

const eventsOf = (frames: string[], name: string) =>
  frames
    .filter((frame) => frame.startsWith(`event: ${name}\n`))
    .map((frame) => JSON.parse(frame.slice(frame.indexOf("data: ") + 6)) as Record<string, unknown>);

describe("REST API", () => {
  it("requires the token on every route but /healthz and the dashboard's files, and says nothing else without it", async () => {
    const fixture = await startFixture();
    expect(await json(fetch(`${fixture.url}/healthz`))).toEqual({
      status: 200,
      body: { status: "ok", version: "0.1.0", store: { state: "ok", pendingWrites: expect.any(Number) } },
    });
    for (const path of ["/api/agents", "/api/sessions", "/api/questions", "/api/records", "/api/locations", "/api/events", "/metrics", "/acp"]) {
      expect(await json(fetch(fixture.url + path))).toEqual({ status: 401, body: { error: "unauthorized" } });
      expect((await fetch(fixture.url + path, { headers: { authorization: "Bearer not-the-token" } })).status).toBe(401);
    }
    expect((await fetch(`${fixture.url}/api/sessions`, { method: "POST", body: "{}" })).status).toBe(401);
    // Never in the URL (proxies log URLs): `?token=` is no credential, on any route.
    for (const path of ["/api/agents", "/api/events"]) expect((await fetch(`${fixture.url}${path}?token=${fixture.token}`)).status).toBe(401);
    // The scheme is case-insensitive (RFC 9110); a cookie is never a credential.
    expect((await fetch(`${fixture.url}/api/agents`, { headers: { authorization: `bearer ${fixture.token}` } })).status).toBe(200);
    expect((await fetch(`${fixture.url}/api/agents`, { headers: { authorization: `BEARER  ${fixture.token}` } })).status).toBe(200);
    expect((await fetch(`${fixture.url}/api/agents`, { headers: { authorization: `Basic ${fixture.token}` } })).status).toBe(401);
    expect((await fetch(`${fixture.url}/api/agents`, { headers: { cookie: `other=1; berth_token=${fixture.token}` } })).status).toBe(401);
  });

  it("lists agents and locations, and reading locations boots none", async () => {
    const fixture = await startFixture();
    expect(await json(fixture.api("/api/agents"))).toEqual({
      status: 200,
      body: { agents: ["demo"], default: "demo", details: [{ id: "demo", origin: "bundled", version: null, login: "unknown" }] },
    });
    const session = await createSession(fixture);
    expect(await json(fixture.api("/api/locations"))).toEqual({ status: 200, body: { locations: [], unreachable: [] } });
    await fixture.berth.host.hold(session.id, "test").child;
    const { body: located } = await json<{ locations: Array<Record<string, unknown>> }>(fixture.api("/api/locations"));
    expect(located.locations).toEqual([
      expect.objectContaining({ host: null, directory: fixture.workDir, workspace: null, sessions: [session.id], keptBy: "idle-ttl" }),
    ]);
  });

  it("creates, lists, reads and deletes sessions, refusing bad input with the reason", async () => {
    const fixture = await startFixture();
    const first = await createSession(fixture);
    expect(first).toMatchObject({ cwd: fixture.workDir, agent: "demo", workspace: null, state: "childless", holders: 0, pid: null });
    const other = tempDir("berth-server-other-");
    const second = await createSession(fixture, { cwd: `${other}/./`, agent: "demo", workspace: "review" });
    expect(second).toMatchObject({ cwd: other, workspace: "review" });

    const all = await json<{ sessions: SessionView[] }>(fixture.api("/api/sessions"));
    expect(all.body.sessions.map((s) => s.id)).toEqual([second.id, first.id]);
    const filtered = await json<{ sessions: SessionView[] }>(fixture.api(`/api/sessions?cwd=${encodeURIComponent(fixture.workDir)}`));
    expect(filtered.body.sessions.map((s) => s.id)).toEqual([first.id]);
    expect(await json(fixture.api(`/api/sessions/${first.id}`))).toEqual({ status: 200, body: first });

    const refusals: Array<[unknown, number, string, RegExp]> = [
      ["{ not json", 400, "invalid_json", /not valid JSON/],
      ["", 400, "invalid_body", /empty/],
      [`{"cwd":"/tmp","x":${"[".repeat(6_000)}${"]".repeat(6_000)}}`, 400, "body_too_deep", /nests objects and arrays more than 64 levels deep/],
      [{}, 400, "invalid_body", /cwd: expected an absolute directory path/],
      [{ cwd: fixture.workDir, colour: "red" }, 400, "invalid_body", /unknown field "colour"/],
      [{ cwd: "relative/dir" }, 400, "invalid_location", /must be absolute, got relative path "relative\/dir"/],
      [{ cwd: `${fixture.workDir}/missing` }, 400, "invalid_location", /directory does not exist/],
      [{ cwd: fixture.workDir, agent: "gpt-99" }, 400, "unknown_agent", /unknown agent "gpt-99" \(configured agents: demo\)/],
      [{ cwd: fixture.workDir, workspace: "" }, 400, "invalid_body", /workspace: expected a non-empty workspace id/],
    ];
    for (const [input, status, code, message] of refusals) {
      const refused = await json<{ error: string; message: string }>(fixture.api("/api/sessions", body(input)));
      expect(refused.status, JSON.stringify(input)).toBe(status);
      expect(refused.body.error).toBe(code);
      expect(refused.body.message).toMatch(message);
    }
    const huge = await json<{ error: string }>(fixture.api("/api/sessions", body({ cwd: fixture.workDir, pad: "x".repeat(1024 * 1024) })));
    expect(huge).toMatchObject({ status: 413, body: { error: "body_too_large" } });
    expect((await json<{ error: string }>(fixture.api("/api/sessions?cwd=relative"))).status).toBe(400);
    expect(await json(fixture.api("/api/sessions/nope"))).toEqual({
      status: 404,
      body: { error: "session_not_found", message: 'no session "nope"' },
    });

    // Deleting a session with a running agent stops it, and its journal goes.
    const child = await fixture.berth.host.hold(first.id, "test").child;
    const deleted = await fixture.api(`/api/sessions/${first.id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(await waitUntilGone([child.pid])).toEqual([]);
    expect((await fixture.api(`/api/sessions/${first.id}`)).status).toBe(404);
    expect((await fixture.api(`/api/sessions/${first.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await fixture.api(`/api/sessions/${first.id}/events`)).status).toBe(404);
  });

  it("reads a session's agent state as Berth keeps it, starting no agent", async () => {
    const fixture = await startFixture();
    const session = await createSession(fixture);
    expect(await json(fixture.api(`/api/sessions/${session.id}/agent-state`))).toEqual({ status: 200, body: {} });
    expect(fixture.berth.host.getSession(session.id)).toMatchObject({ state: "childless", pid: null });

    await fixture.berth.host.prompt(session.id, [{ type: "text", text: "hello" }]);
    const { status, body: state } = await json<Record<string, unknown>>(fixture.api(`/api/sessions/${session.id}/agent-state`));
    expect(status).toBe(200);
    expect(state).toEqual(fixture.berth.host.agentState(session.id));
    expect(state).toMatchObject({ modes: { currentModeId: "ask" }, models: { currentModelId: "demo-small" } });
    expect(await json(fixture.api("/api/sessions/nope/agent-state"))).toEqual({
      status: 404,
      body: { error: "session_not_found", message: 'no session "nope"' },
    });
  });

  it("pages through a session's journal", async () => {
    const fixture = await startFixture();
    const session = await createSession(fixture);
    await fixture.berth.host.prompt(session.id, [{ type: "text", text: "one two three" }]);
    const all = await json<{ events: JournalEvent[] }>(fixture.api(`/api/sessions/${session.id}/events`));
    expect(all.status).toBe(200);
    // (The agent's command announcement as the session opened may come before the turn or in it.)
    expect(all.body.events.map((e) => e.seq)).toEqual(all.body.events.map((_, i) => i + 1));
    expect(all.body.events.find((e) => e.kind === "turn_started")).toMatchObject({
      sessionId: session.id,
      payload: { prompt: [{ type: "text", text: "one two three" }] },
    });
    expect(all.body.events.at(-1)).toMatchObject({ kind: "turn_ended" });
    const page = await json<{ events: JournalEvent[] }>(fixture.api(`/api/sessions/${session.id}/events?after=1&limit=2`));
    expect(page.body.events.map((e) => e.seq)).toEqual([2, 3]);
    for (const query of ["after=-1", "limit=abc", "limit=10001", "after=1.5"]) {
      const refused = await json<{ error: string; message: string }>(fixture.api(`/api/sessions/${session.id}/events?${query}`));
      expect(refused.status, query).toBe(400);
      expect(refused.body.error).toBe("invalid_query");
    }
    // An empty page would say "more" forever: a reader paging on from its last event could never move.
    expect(await json(fixture.api(`/api/sessions/${session.id}/events?limit=0&merge=chunks`))).toEqual({
      status: 400,
      body: { error: "invalid_query", message: "limit must be from 1 to 10000, got 0" },
    });
  });

  it("lists pending questions and takes the first answer: 404 unknown, 400 invalid, 409 already answered", async () => {
    const fixture = await startFixture();
    const session = await createSession(fixture);
    const turn = fixture.berth.host.prompt(session.id, [{ type: "text", text: "/ask Ship it?" }]);
    await waitUntil(() => fixture.berth.host.pendingQuestions().length === 1, "the question is pending");
    const { body: listed } = await json<{ questions: QuestionView[] }>(fixture.api("/api/questions"));
    expect(listed.questions).toEqual([expect.objectContaining({ sessionId: session.id, kind: "permission", state: "pending" })]);
    expect((await json<{ questions: QuestionView[] }>(fixture.api("/api/questions?sessionId=another"))).body.questions).toEqual([]);
    const id = listed.questions[0]!.id;

    expect(await json(fixture.api("/api/questions/nope/answer", body({ optionId: "allow" })))).toMatchObject({
      status: 404,
      body: { error: "question_not_found" },
    });
    expect(await json(fixture.api(`/api/questions/${id}/answer`, body({ optionId: "maybe" })))).toMatchObject({
      status: 400,
      body: { error: "invalid_answer", message: expect.stringContaining('has no option "maybe" (options: allow, deny)') },
    });
    expect(await json(fixture.api(`/api/questions/${id}/answer`, body({ choice: "allow" })))).toMatchObject({
      status: 400,
      body: { error: "invalid_body" },
    });
    expect(await json(fixture.api(`/api/questions/${id}/answer`, body({ action: "accept", content: { a: 1 } })))).toMatchObject({
      status: 400,
      body: {
        error: "invalid_answer",
        message: `question "${id}" is a permission: answer with one of its options (allow, deny) as { "optionId": "..." }`,
      },
    });

    expect(await json(fixture.api(`/api/questions/${id}/answer`, body({ optionId: "allow" })))).toMatchObject({
      status: 200,
      body: { id, state: "answered" },
    });
    expect(await json(fixture.api(`/api/questions/${id}/answer`, body({ optionId: "deny" })))).toMatchObject({
      status: 409,
      body: { error: "question_already_resolved", message: `question "${id}" was already answered` },
    });
    expect(await turn).toMatchObject({ stopReason: "end_turn" });
    expect((await json<{ questions: QuestionView[] }>(fixture.api("/api/questions"))).body.questions).toEqual([]);
  });

  it("answers forms with accept and content", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect({ capabilities: {} });
    const sessionId = await client.newSession(fixture.workDir);
    // This client cannot fill forms: the question waits for an operator.
    const turn = client.prompt(sessionId, "/elicit Your name?");
    await waitUntil(() => fixture.berth.host.pendingQuestions().length === 1, "the form is pending");
    expect(client.elicitations).toHaveLength(0);
    const [form] = (await json<{ questions: QuestionView[] }>(fixture.api("/api/questions"))).body.questions;
    expect(form).toMatchObject({ kind: "elicitation", request: { message: "Your name?" } });
    expect(await json(fixture.api(`/api/questions/${form!.id}/answer`, body({ action: "accept", content: {} })))).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining("missing required field answer") },
    });
    expect((await fixture.api(`/api/questions/${form!.id}/answer`, body({ action: "accept", content: { answer: "Ada" } }))).status).toBe(200);
    expect(await turn).toMatchObject({ stopReason: "end_turn" });
    expect(client.texts(sessionId)).toContain('Elicitation action: accept, content: {"answer":"Ada"}');
  });

  it("returns recent lifecycle records, oldest first", async () => {
    const fixture = await startFixture();
    const session = await createSession(fixture);
    await fixture.berth.host.prompt(session.id, [{ type: "text", text: "hi" }]);
    const { body: recent } = await json<{ records: StampedRecord[] }>(fixture.api("/api/records?limit=3"));
    expect(recent.records).toHaveLength(3);
    expect(recent.records.map((r) => r.id)).toEqual([...recent.records.map((r) => r.id)].sort((a, b) => a - b));
    expect(recent.records.at(-1)).toMatchObject({
      message: "turn ended",
      record: { kind: "turn_ended", sessionId: session.id, stopReason: "end_turn" },
    });
    const { body: all } = await json<{ records: StampedRecord[] }>(fixture.api("/api/records"));
    expect(all.records.map((r) => r.record.kind)).toEqual(
      expect.arrayContaining(["location_booted", "child_acquired", "turn_started", "turn_ended"]),
    );
    expect((await fixture.api("/api/records?limit=1001")).status).toBe(400);
    expect(await json(fixture.api("/api/records?limit=0"))).toEqual({
      status: 400,
      body: { error: "invalid_query", message: "limit must be from 1 to 1000, got 0" },
    });
  });

  it("streams records, session changes and deletions as Server-Sent Events", async () => {
    const fixture = await startFixture({ events: { keepAliveMs: 50 } });
    const stream = await fixture.api("/api/events");
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = new EventReader(stream);
    const session = await createSession(fixture);
    const client = await fixture.connect();
    await client.load(session.id, fixture.workDir);
    await events.until((frames) => eventsOf(frames, "session").some((view) => view.state === "live" && view.holders === 1));
    await client.prompt(session.id, "hello");
    await events.until((frames) => eventsOf(frames, "record").some((r) => (r.record as { kind: string }).kind === "turn_ended"));
    await client.close();
    await events.until((frames) => eventsOf(frames, "session").some((view) => view.holders === 0));
    const deleted = await fixture.api(`/api/sessions/${session.id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);

    const frames = await events.until((seen) => eventsOf(seen, "session_deleted").length > 0 && seen.includes(": keep-alive"));
    await events.close();
    expect(frames[0]).toBe("retry: 2000");
    const records = eventsOf(frames, "record").map((r) => (r.record as { kind: string }).kind);
    expect(records).toEqual(expect.arrayContaining(["location_booted", "child_acquired", "turn_started", "turn_ended", "child_released"]));
    expect(eventsOf(frames, "session").every((view) => view.id === session.id)).toBe(true);
    expect(eventsOf(frames, "session_deleted")).toEqual([{ id: session.id }]);
  });

  it("announces a deletion that did not come through the REST route (an ACP client's, the host's own)", async () => {
    const fixture = await startFixture();
    const events = new EventReader(await fixture.api("/api/events"));
    await events.until((frames) => frames.length > 0);
    const session = await createSession(fixture);
    await fixture.berth.host.deleteSession(session.id);
    const frames = await events.until((seen) => eventsOf(seen, "session_deleted").length > 0);
    await events.close();
    expect(eventsOf(frames, "session_deleted")).toEqual([{ id: session.id }]);
  });

  it("streams this host's own sessions for its peers: a snapshot first, then their changes and deletions", async () => {
    const fixture = await startFixture();
    const before = await createSession(fixture);
    const stream = await fixture.api("/api/own-sessions/events");
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = new EventReader(stream);
    const [snapshot] = eventsOf(await events.until((frames) => eventsOf(frames, "snapshot").length > 0), "snapshot");
    expect((snapshot as { sessions: SessionView[] }).sessions).toEqual([expect.objectContaining({ id: before.id, state: "childless" })]);
    await fixture.berth.host.hold(before.id, "viewer").child;
    await events.until((frames) => eventsOf(frames, "session").some((view) => view.id === before.id && view.state === "live" && view.holders === 1));
    await fixture.berth.host.deleteSession(before.id);
    const frames = await events.until((seen) => eventsOf(seen, "session_deleted").length > 0);
    await events.close();
    expect(eventsOf(frames, "session_deleted")).toEqual([{ id: before.id }]);
  });

  it("announces a session's new agent state once it is committed: another client set the mode", async () => {
    const fixture = await startFixture();
    const events = new EventReader(await fixture.api("/api/events"));
    await events.until((frames) => frames.length > 0);
    const { host } = fixture.berth;
    // The mode each announcement stood for, as the host held it then.
    const told: string[] = [];
    host.onAgentStateChanged((id) => told.push(`${id}:${(host.agentState(id).modes as { currentModeId: string }).currentModeId}`));
    const client = await fixture.connect();
    const sessionId = await client.newSession(fixture.workDir);
    await client.agent.request(methods.agent.session.setMode, { sessionId, modeId: "code" });
    await waitUntil(() => told.includes(`${sessionId}:code`), "the host told of the new mode");
    const frames = await events.until((seen) => eventsOf(seen, "agent_state").length === told.length);
    await events.close();
    expect(eventsOf(frames, "agent_state")).toEqual(told.map(() => ({ id: sessionId })));
    // What a reader then asks for is the new mode.
    const state = await json<{ modes: { currentModeId: string } }>(fixture.api(`/api/sessions/${sessionId}/agent-state`));
    expect(state.body.modes.currentModeId).toBe("code");
  });

  it("serves a command's output while it runs, without holding the session; 404 for a terminal it does not have", async () => {
    const fixture = await startFixture();
    const session = await createSession(fixture);
    const marker = join(fixture.workDir, "finish");
    const turn = fixture.berth.host.prompt(session.id, [{ type: "text", text: `/run echo started; while [ ! -f ${marker} ]; do sleep 0.05; done` }]);
    type Update = { sessionUpdate: string; content?: { type: string; terminalId?: string }[] };
    const terminalOf = () =>
      fixture.berth.host
        .events(session.id, { after: 0, limit: 100 })
        .map((e) => (e.payload as { update?: Update }).update)
        .find((u) => u?.sessionUpdate === "tool_call")?.content?.[0]?.terminalId;
    await waitUntil(() => terminalOf() !== undefined, "the tool call shows its terminal");
    const terminalId = terminalOf()!;
    const url = `/api/sessions/${session.id}/terminals/${terminalId}`;
    await vi.waitFor(
      async () => expect(await json(fixture.api(url))).toEqual({ status: 200, body: { output: "started\n", truncated: false, exitStatus: null } }),
      {
        timeout: 10_000,
        interval: 50,
      },
    );
    expect(fixture.berth.host.getSession(session.id)?.holders).toBe(0);
    // Another session of the same location (its terminals are shared there) does not see it.
    const neighbour = await createSession(fixture);
    expect(await json(fixture.api(`/api/sessions/${neighbour.id}/terminals/${terminalId}`))).toMatchObject({
      status: 404,
      body: { error: "terminal_not_found" },
    });
    writeFileSync(marker, "");
    expect((await turn).stopReason).toBe("end_turn");
    // The agent released it with its final update: gone.
    expect(await json(fixture.api(url))).toEqual({
      status: 404,
      body: {
        error: "terminal_not_found",
        message: `no terminal "${terminalId}" for session "${session.id}" (a command's output is kept until its agent releases the terminal or the location closes)`,
      },
    });
    expect((await json(fixture.api(`/api/sessions/nope/terminals/${terminalId}`))).status).toBe(404);
  });

  it("coalesces a burst of session changes into one view", async () => {
    const fixture = await startFixture();
    const events = new EventReader(await fixture.api("/api/events"));
    await events.until((frames) => frames.length > 0);
    const session = await createSession(fixture);
    const tickets = Array.from({ length: 20 }, (_, i) => fixture.berth.host.hold(session.id, `viewer-${i}`));
    const frames = await events.until((seen) => eventsOf(seen, "session").some((view) => view.state === "live"));
    // Twenty holds in one burst: no view ever shows fewer than all of them.
    expect(eventsOf(frames, "session").map((view) => view.holders)).toEqual(eventsOf(frames, "session").map(() => 20));
    for (const ticket of tickets) ticket.release();
    await events.close();
  });

  it("exposes the named metrics in Prometheus text", async () => {
    const fixture = await startFixture();
    const client = await fixture.connect();
    const sessionId = await client.newSession(fixture.workDir);
    await client.prompt(sessionId, "count me");
    const res = await fixture.api("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    for (const name of [
      "berth_agent_children",
      "berth_sessions",
      "berth_locations_cached",
      "berth_location_evictions_total",
      "berth_interruptions_total",
      "berth_questions_pending",
      "berth_acquisition_seconds",
      "berth_clients_connected",
      "berth_process_tracking",
      "berth_turns_total",
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain("berth_agent_children 1");
    expect(text).toContain('berth_sessions{state="live"} 1');
    expect(text).toContain("berth_locations_cached 1");
    expect(text).toContain("berth_clients_connected 1");
    const mode = fixture.berth.host.processTracking().mode;
    expect(text).toContain(`berth_process_tracking{mode="${mode}"} 1`);
    expect(text).toContain(`berth_process_tracking{mode="${mode === "cgroup" ? "marker" : "cgroup"}"} 0`);
    expect(text).toContain('berth_turns_total{outcome="end_turn"} 1');
    expect(text).toContain("berth_acquisition_seconds_count 1");
    expect(text).toContain('berth_interruptions_total{reason="user"} 0');
    expect(text).not.toContain("process_cpu");
    // One host on SQLite: no fleet to describe (test/fleet/adoption.test.ts covers a fleet's).
    expect(text).not.toContain("berth_fleet_");
  });

  it("reads the sessions for a scrape with one query, however many there are", async () => {
    const fixture = await startFixture();
    for (let i = 0; i < 30; i++) await fixture.berth.host.createSession({ cwd: fixture.workDir });
    const store = (fixture.berth.host as unknown as { parts: { store: Store } }).parts.store;
    const reads = [vi.spyOn(store.sessions, "list"), vi.spyOn(store.sessions, "get"), vi.spyOn(store.questions, "listPending")];
    const text = await fixture.api("/metrics").then((r) => r.text());
    expect(text).toContain('berth_sessions{state="childless"} 30');
    expect(reads.reduce((calls, spy) => calls + spy.mock.calls.length, 0)).toBeLessThanOrEqual(2);
  });

  it("serves the dashboard's files without a token and without cookies, and falls back to index.html", async () => {
    const webDir = tempDir("berth-server-web-");
    writeFileSync(join(webDir, "index.html"), "<!doctype html><title>Berth</title>");
    mkdirSync(join(webDir, "assets"));
    writeFileSync(join(webDir, "assets", "app-1234.js"), "console.log('berth')");
    const fixture = await startFixture({ webDir });

    const page = await fetch(`${fixture.url}/?token=${fixture.token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("set-cookie")).toBeNull();
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(await page.text()).toBe("<!doctype html><title>Berth</title>");

    const asset = await fetch(`${fixture.url}/assets/app-1234.js`);
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(asset.headers.get("cross-origin-resource-policy")).toBe("same-origin");
    expect(await asset.text()).toBe("console.log('berth')");
    expect(await (await fetch(`${fixture.url}/sessions/some-id`)).text()).toContain("<title>Berth</title>");
    // A file of an older build (a page open across an upgrade asks for it): named, never the page in its place.
    expect(await json(fixture.api("/assets/ChatPanel-0ld0ld00.js"))).toMatchObject({
      status: 404,
      body: { error: "asset_not_found", message: expect.stringContaining("/assets/ChatPanel-0ld0ld00.js is not part of this build") },
    });
    expect(await (await fetch(`${fixture.url}/..%2F..%2F..%2Fetc%2Fpasswd`)).text()).toContain("<title>Berth</title>");

    expect(await json(fixture.api("/api/nothing-here"))).toMatchObject({ status: 404, body: { error: "not_found" } });
    expect(await json(fixture.api("/api/sessions", { method: "PUT" }))).toMatchObject({
      status: 405,
      body: { error: "method_not_allowed", message: expect.stringContaining("allowed: GET, POST") },
    });
    // Plain HTTP on /acp is ACP's Streamable HTTP profile: a GET must ask for an event stream.
    expect((await fixture.api("/acp")).status).toBe(406);
  });

  it("says so when the dashboard is not built", async () => {
    const fixture = await startFixture({ webDir: tempDir("berth-server-noweb-") });
    expect(await json(fixture.api("/"))).toMatchObject({ status: 404, body: { error: "dashboard_not_built" } });
  });
});
