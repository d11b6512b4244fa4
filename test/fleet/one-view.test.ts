// One view (docs/fleet.md): two real `berth serve --store postgres://…` on one throwaway cluster.
// Host B lists host A's session with its owner, A's question in its list and its event stream,
// A's records; B refuses to change or answer what A owns (409 owned_by_other_host); once A is
// killed and its heartbeat is older than the TTL, B still shows the session, with `hostOnline: false`.
// With a cluster secret, B shows A's session live as A shows it (its agent, holders and turn), in its REST, its event
// stream and its dashboard, and the store's view again once A is dead; A streams its own sessions only to its peers.
import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { ClusterSecret } from "../../src/server/cluster-secret.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { waitUntil } from "../support/process-table.js";
import { launchBrowser, openPage, waitUntilGone } from "../web/dashboard-harness.js";
import { AcpClient, errorLines, eventually, FleetTestBed, getJson, OperatorStream, sleepingTurn } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
const streams: OperatorStream[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  await bed.cleanup();
});

const fleet = (url: string) => ({ fleet: { heartbeatInterval: "250ms", hostTtl: "4s", url } });
const A_URL = "http://127.0.0.1:7421";

interface View {
  id: string;
  host: string | null;
  hostOnline: boolean;
  pendingQuestions: number;
}
type Sessions = { sessions: View[] };
type Questions = { questions: Array<{ id: string; sessionId: string; state: string }> };
type Records = { records: Array<{ id: number; record: { kind: string; sessionId?: string } }> };
type Hosts = { hosts: Array<{ id: string; url: string | null; incarnation: number; online: boolean; self: boolean }> };
type Refusal = { error: string; message: string };

async function send(url: string, token: string, method: string, path: string, body: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Refusal };
}

const SECRET = "peer-live-test-secret-0123456789abcdef";

/** What only a session's owner knows, besides what the store says. */
interface LiveView extends View {
  state: string;
  pid: number | null;
  holders: number;
  turnActive: boolean;
  turnStartedAt: number | null;
  preview: { role: string; text: string } | null;
}

/** A fleet host at the address it listens on, with the cluster secret. */
function startHost(storeUrl: string, id: string) {
  return bed.serve(storeUrl, id, bed.tempDir(`berth-live-${id}-`), { fleet: { heartbeatInterval: "250ms", hostTtl: "4s", secret: SECRET } });
}

/** The events of a host's stream of its own sessions, read as peer `from` would, until `enough` says so. */
async function ownSessionsAsPeer(url: string, from: string, to: string, enough: (text: string) => boolean): Promise<string> {
  const path = "/api/own-sessions/events";
  const abort = new AbortController();
  const response = await fetch(`${url}${path}`, {
    headers: new ClusterSecret(SECRET, from).headers({ id: to, url }, "live-feed", "GET", path),
    signal: abort.signal,
  });
  expect(response.status).toBe(200);
  let text = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (enough(text)) break;
    }
  } finally {
    abort.abort();
  }
  return text;
}

describe("one view of a fleet", () => {
  it("shows every host's sessions, questions and records on any host, read-only there, and a dead owner as offline", async () => {
    const url = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-view-work-");
    const a = await bed.serve(url, "host-a", bed.tempDir("berth-view-a-"), fleet(A_URL));
    const b = await bed.serve(url, "host-b", bed.tempDir("berth-view-b-"), fleet("http://127.0.0.1:7422"));
    const stream = await OperatorStream.open(b.url, b.token);
    streams.push(stream);

    const { body: hosts } = await getJson<Hosts>(b.url, b.token, "/api/hosts");
    expect(hosts.hosts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: "host-a", url: A_URL, incarnation: 1, online: true, self: false }),
        expect.objectContaining({ id: "host-b", online: true, self: true }),
      ]),
    );

    // A session created on A: B lists it, owned by A.
    const acp = new AcpClient(a.acpUrl, a.token);
    await acp.initialize();
    const sessionId = await acp.newSession(workDir);
    const onB = async () => (await getJson<Sessions>(b.url, b.token, "/api/sessions")).body.sessions.find((view) => view.id === sessionId);
    await eventually(async () => (await onB()) !== undefined, "host B lists host A's session");
    expect(await onB()).toMatchObject({ id: sessionId, host: "host-a", hostOnline: true });
    expect((await getJson<View>(a.url, a.token, `/api/sessions/${sessionId}`)).body).toMatchObject({ host: "host-a", hostOnline: true });

    // A question asked on A: in B's list, and in B's event stream (its record, and the session's count).
    void acp.prompt(sessionId, "/ask May I?").catch(() => undefined);
    await waitUntil(() => acp.asked.length > 0, "the agent asked");
    const questionsOnB = async () => (await getJson<Questions>(b.url, b.token, "/api/questions")).body.questions;
    await eventually(async () => (await questionsOnB()).some((question) => question.sessionId === sessionId), "host B lists A's question");
    const [question] = await questionsOnB();
    expect(question).toMatchObject({ sessionId, state: "pending" });
    expect((await getJson<unknown>(b.url, b.token, `/api/sessions/${sessionId}`)).body).toMatchObject({ pendingQuestions: 1 });
    await waitUntil(
      () =>
        stream
          .events<{ record: { kind: string; sessionId?: string; questionId?: string } }>("record")
          .some((r) => r.record.kind === "question_asked" && r.record.questionId === question!.id),
      "host B streams A's question_asked record",
    );
    await waitUntil(
      () => stream.events<View>("session").some((view) => view.id === sessionId && view.host === "host-a" && view.pendingQuestions === 1),
      "host B streams A's session with its pending question",
    );
    const { body: records } = await getJson<Records>(b.url, b.token, "/api/records?limit=1000");
    expect(records.records.map((r) => r.record.kind)).toContain("question_asked");

    // Read-only on B: answering, renaming, deleting and reopening it are refused, naming the owner and its URL.
    for (const [method, path, body] of [
      ["POST", `/api/questions/${question!.id}/answer`, { optionId: "allow" }],
      ["PATCH", `/api/sessions/${sessionId}`, { title: "renamed on B" }],
      ["DELETE", `/api/sessions/${sessionId}`, undefined],
    ] as const) {
      const refused = await send(b.url, b.token, method, path, body);
      expect(refused.status, `${method} ${path}`).toBe(409);
      expect(refused.body.error).toBe("owned_by_other_host");
      expect(refused.body.message).toContain(`"host-a" (${A_URL})`);
    }
    const acpOnB = new AcpClient(b.acpUrl, b.token);
    await acpOnB.initialize();
    const reopened = await acpOnB.resume(sessionId, workDir).then(
      () => undefined,
      (error: unknown) => error as { data?: { code?: string }; message: string },
    );
    expect(reopened?.data?.code).toBe("owned_by_other_host");
    acpOnB.close();
    // Still pending on A: nothing B was asked reached it.
    expect((await getJson<Questions>(a.url, a.token, "/api/questions")).body.questions).toEqual([expect.objectContaining({ id: question!.id })]);

    // A killed: past the TTL B shows its session as offline, never drops it, and still refuses to change it.
    a.server.signal("SIGKILL");
    await a.server.exited;
    acp.close();
    await eventually(async () => (await onB())?.hostOnline === false, "host B shows A's session with its host offline");
    expect(await onB()).toMatchObject({ id: sessionId, host: "host-a", hostOnline: false, pendingQuestions: 1 });
    await waitUntil(
      () => stream.events<View>("session").some((view) => view.id === sessionId && !view.hostOnline),
      "host B streams the session's host offline",
    );
    expect((await getJson<Hosts>(b.url, b.token, "/api/hosts")).body.hosts).toContainEqual(
      expect.objectContaining({ id: "host-a", online: false, self: false }),
    );
    const refused = await send(b.url, b.token, "DELETE", `/api/sessions/${sessionId}`, undefined);
    expect(refused).toMatchObject({ status: 409, body: { error: "owned_by_other_host" } });
    expect(stream.events<{ id: string }>("session_deleted")).toEqual([]);
    expect(errorLines(b.server)).toEqual([]);
  }, 90_000);

  it("tells an answer to a question already answered on another host 409 question_already_resolved, once that host's view dropped it", async () => {
    const url = await postgres.freshDatabase();
    const a = await bed.serve(url, "host-a", bed.tempDir("berth-view-a-"), fleet(A_URL));
    const b = await bed.serve(url, "host-b", bed.tempDir("berth-view-b-"), fleet("http://127.0.0.1:7422"));
    const acp = new AcpClient(a.acpUrl, a.token);
    try {
      await acp.initialize();
      const sessionId = await acp.newSession(bed.tempDir("berth-view-work-"));
      void acp.prompt(sessionId, "/ask May I?").catch(() => undefined);
      const questionsOnB = async () => (await getJson<Questions>(b.url, b.token, "/api/questions")).body.questions;
      await eventually(async () => (await questionsOnB()).length > 0, "host B lists A's question");
      const [question] = await questionsOnB();
      expect((await send(a.url, a.token, "POST", `/api/questions/${question!.id}/answer`, { optionId: "allow" })).status).toBe(200);
      await eventually(async () => (await questionsOnB()).length === 0, "host B saw the question answered");
      expect(await send(b.url, b.token, "POST", `/api/questions/${question!.id}/answer`, { optionId: "allow" })).toMatchObject({
        status: 409,
        body: { error: "question_already_resolved", message: `question "${question!.id}" was already answered` },
      });
      expect(await send(b.url, b.token, "POST", "/api/questions/no-such-question/answer", { optionId: "allow" })).toMatchObject({
        status: 404,
        body: { error: "question_not_found" },
      });
    } finally {
      acp.close();
    }
  }, 90_000);

  it("pages every host's sessions together: by limit and cursor, each once, in the whole list's order", async () => {
    const url = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-view-pages-work-");
    const a = await bed.serve(url, "host-a", bed.tempDir("berth-view-pages-a-"), fleet(A_URL));
    const b = await bed.serve(url, "host-b", bed.tempDir("berth-view-pages-b-"), fleet("http://127.0.0.1:7422"));
    // Made in turns on A and B, so B's own and A's interleave in the list.
    for (const host of [a, b, a, b, a]) expect((await send(host.url, host.token, "POST", "/api/sessions", { cwd: workDir })).status).toBe(201);
    const whole = async () => (await getJson<Sessions & { nextCursor?: string }>(b.url, b.token, "/api/sessions?limit=1000")).body;
    await eventually(async () => (await whole()).sessions.length === 5, "host B lists all five sessions");
    const { sessions, nextCursor } = await whole();
    expect(nextCursor).toBeUndefined();
    expect(sessions.filter((view) => view.host === "host-a")).toHaveLength(3);
    for (const limit of [1, 2, 3]) {
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const query = `/api/sessions?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const { status, body } = await getJson<Sessions & { nextCursor?: string }>(b.url, b.token, query);
        expect(status).toBe(200);
        paged.push(...body.sessions.map((view) => view.id));
        cursor = body.nextCursor;
      } while (cursor !== undefined);
      expect({ limit, paged }).toEqual({ limit, paged: sessions.map((view) => view.id) });
    }
  }, 90_000);

  it("answers 404 not_in_a_fleet for GET /api/hosts on the default SQLite store", async () => {
    const dataDir = bed.tempDir("berth-view-sqlite-");
    const server = bed.spawn(["serve", "--port", "0", "--data-dir", dataDir], { XDG_CONFIG_HOME: dataDir });
    const { url, token } = await server.startupLine();
    const { status, body } = await getJson<Refusal>(url, token, "/api/hosts");
    expect(status).toBe(404);
    expect(body.error).toBe("not_in_a_fleet");
    // One host: its sessions name no host, and are never offline.
    const created = await send(url, token, "POST", "/api/sessions", { cwd: bed.tempDir("berth-view-sqlite-work-") });
    expect(created.status).toBe(201);
    const { body: sessions } = await getJson<Sessions>(url, token, "/api/sessions");
    expect(sessions.sessions).toEqual([expect.objectContaining({ host: null, hostOnline: true })]);
  }, 60_000);

  it("shows a peer's running session as its owner does (REST, event stream, dashboard), and the store's view once the owner is dead", async () => {
    const storeUrl = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-live-work-");
    const a = await startHost(storeUrl, "host-a");
    const b = await startHost(storeUrl, "host-b");
    const stream = await OperatorStream.open(b.url, b.token);
    streams.push(stream);
    const launched = await launchBrowser();
    try {
      const opened = await openPage(launched.browser, b.url, `/?token=${b.token}`);

      // A session on A whose agent sleeps in a turn, held by A's client: B shows what A shows.
      const { acp, sessionId, turn, agentPid } = await sleepingTurn(a, workDir, "10m");
      const onA = async () => (await getJson<LiveView>(a.url, a.token, `/api/sessions/${sessionId}`)).body;
      const onB = async () => (await getJson<LiveView>(b.url, b.token, `/api/sessions/${sessionId}`)).body;
      await eventually(async () => (await onB()).turnActive, "host B shows A's turn running");
      const live = await onB();
      expect(live).toMatchObject({ id: sessionId, host: "host-a", hostOnline: true, state: "live", pid: agentPid, holders: 1, turnActive: true });
      expect(live.turnStartedAt).toBe((await onA()).turnStartedAt);
      // The agent's words come after its turn began: followed live too (at most a second late), so waited for.
      await eventually(async () => (await onB()).preview?.text.includes("Sleeping for") === true, "host B shows what A's agent said");
      const listed = (await getJson<{ sessions: LiveView[] }>(b.url, b.token, "/api/sessions")).body.sessions.find((view) => view.id === sessionId);
      expect(listed).toMatchObject({ host: "host-a", state: "live", pid: agentPid, holders: 1, turnActive: true });
      await waitUntil(
        () => stream.events<LiveView>("session").some((view) => view.id === sessionId && view.turnActive && view.pid === agentPid),
        "host B streams A's running turn",
      );

      // B's dashboard (its Host page's agent processes) shows it running on A, with A's agent's pid.
      await opened.page.getByRole("link", { name: "Host", exact: true }).click();
      const card = opened.page.getByRole("region", { name: /Agent processes/ }).locator(`tr[data-session-id="${sessionId}"]`);
      await card.locator(".running", { hasText: "running for" }).waitFor();
      expect(await card.locator(".process-agent").textContent()).toContain("host-a");
      expect(await card.locator(".pid").textContent()).toBe(String(agentPid));
      expect(await card.locator(".holders").textContent()).toBe("1");

      // The turn ends on A (cancelled by its client): B's stream tells it.
      const streamedBefore = stream.events<LiveView>("session").length;
      await acp.agent.notify(methods.agent.session.cancel, { sessionId });
      expect(await turn).toMatchObject({ stopReason: "cancelled" });
      await waitUntil(
        () =>
          stream
            .events<LiveView>("session")
            .slice(streamedBefore)
            .some((view) => view.id === sessionId && !view.turnActive && view.pid === agentPid),
        "host B streams the end of A's turn",
      );
      await eventually(async () => (await onB()).turnActive === false, "host B shows A's turn ended");
      expect(await onB()).toMatchObject({ state: "live", pid: agentPid, holders: 1, turnActive: false });
      await card.getByText("idle", { exact: true }).waitFor();
      expect(opened.errors).toEqual([]);
      await opened.close();

      // One hop: what A streams to its peers is its own sessions, never what it shows of B's.
      const onBOwn = new AcpClient(b.acpUrl, b.token);
      await onBOwn.initialize();
      const sessionOfB = await onBOwn.newSession(workDir);
      onBOwn.close();
      await eventually(
        async () => (await getJson<LiveView>(a.url, a.token, `/api/sessions/${sessionOfB}`)).status === 200,
        "host A lists B's session",
      );
      const snapshot = await ownSessionsAsPeer(a.url, "host-b", "host-a", (text) => text.includes("event: snapshot\n") && text.endsWith("\n\n"));
      const frame = snapshot.split("\n\n").find((candidate) => candidate.startsWith("event: snapshot\n"))!;
      const { sessions } = JSON.parse(frame.slice(frame.indexOf("\ndata: ") + 7)) as { sessions: LiveView[] };
      expect(sessions.map((view) => `${view.host} ${view.id}`)).toEqual([`host-a ${sessionId}`]);

      // A killed: B shows the store's view again, with A offline and no agent.
      acp.close();
      await bed.killHost(a);
      await eventually(async () => (await onB()).hostOnline === false, "host B shows A offline");
      expect(await onB()).toMatchObject({ host: "host-a", hostOnline: false, state: "childless", pid: null, holders: 0, turnActive: false });
      await waitUntil(
        () => stream.events<LiveView>("session").some((view) => view.id === sessionId && !view.hostOnline && view.pid === null),
        "host B streams A's session as the store knows it",
      );
    } finally {
      const browserPids = await launched.pids().catch(() => []);
      await launched.browser.close();
      expect(await waitUntilGone(browserPids)).toEqual([]);
    }
    expect(errorLines(b.server)).toEqual([]);
  }, 120_000);
});
