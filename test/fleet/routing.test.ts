// Routing (docs/fleet.md): three real `berth serve --store postgres://…` sharing one throwaway cluster
// and one cluster secret. A session created on host A is prompted through host B over ACP (the demo
// agent), its question reaches B's client and is answered through host C's REST API, and the turn ends
// on A with that answer; B's and C's REST show every host's sessions; a client leaving B releases its
// hold on A; a new session is placed on the host `_meta["berth/placement"]` (or the
// deprecated `berth/host`) names. A wrong or missing secret
// is refused, and a client relayed through B gets a clear error when A dies in the middle of its turn.
import { readFileSync } from "node:fs";
import { methods, type RequestError } from "@agentclientprotocol/sdk";
import { createServer, type AddressInfo } from "node:net";
import { describe, expect, it, type TestContext } from "vitest";
import { WebSocket } from "ws";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { waitUntil, waitUntilGone } from "../support/process-table.js";
import { AcpClient, errorLines, eventually, FleetTestBed, getJson } from "./fleet-harness.js";
import { ClusterSecret, type PeerPurpose } from "../../src/server/cluster-secret.js";
import { launchBrowser, openPage } from "../web/browser-harness.js";

const postgres = usePostgresCluster();

/** A test's own hosts and temp directories, removed after it: the tests that mostly wait on a host run concurrently. */
function bedOf({ onTestFinished }: TestContext): FleetTestBed {
  const bed = new FleetTestBed();
  onTestFinished(() => bed.cleanup());
  return bed;
}

const SECRET = "relay-test-secret-0123456789abcdef";

/** The headers host `from` sends a `method` request for `path` to host `to` with, for `purpose`: a fresh proof of the secret. */
const peerHeaders = (
  from: string,
  to: { id: string; url: string },
  method: string,
  path: string,
  { secret = SECRET, purpose = "relay" }: { secret?: string; purpose?: PeerPurpose } = {},
) => new ClusterSecret(secret, from).headers(to, purpose, method, path);

interface View {
  id: string;
  host: string | null;
  state: string;
  pid: number | null;
  holders: number;
  turnActive: boolean;
}
type Sessions = { sessions: View[] };
type Questions = { questions: Array<{ id: string; sessionId: string; state: string }> };
type Events = { events: Array<{ seq: number; kind: string; payload: unknown }> };

/** A fleet host at its own registered URL; its secret in the config file, or (`secretIn: "env"`) in `BERTH_CLUSTER_SECRET`. */
async function startHost(
  bed: FleetTestBed,
  storeUrl: string,
  id: string,
  { secret = SECRET, secretIn = "config" }: { secret?: string; secretIn?: "config" | "env" } = {},
) {
  // No fleet.url: the host registers the address it listens on, with the port the OS gave it.
  const fleet = { heartbeatInterval: "250ms", hostTtl: "6s", ...(secretIn === "config" ? { secret } : {}) };
  const env: Record<string, string> = secretIn === "env" ? { BERTH_CLUSTER_SECRET: secret } : {};
  return bed.serve(storeUrl, id, bed.tempDir(`berth-relay-${id}-`), { fleet }, { env });
}

async function send(url: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text === "" ? undefined : JSON.parse(text)) as Record<string, unknown> | undefined };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as RequestError & { data?: { code?: string; host?: string } },
  );

/** Hosts A and B (B with `secretOfB`), and a session created on A that B lists. */
async function sessionOfAListedOnB(bed: FleetTestBed, secretOfB = SECRET) {
  const storeUrl = await postgres.freshDatabase();
  const workDir = bed.tempDir("berth-relay-work-");
  const [a, b] = await Promise.all([startHost(bed, storeUrl, "host-a"), startHost(bed, storeUrl, "host-b", { secret: secretOfB })]);
  const onA = new AcpClient(a.acpUrl, a.token);
  await onA.initialize();
  const sessionId = await onA.newSession(workDir);
  onA.close();
  await eventually(async () => (await getJson<View>(b.url, b.token, `/api/sessions/${sessionId}`)).status === 200, "host B lists A's session");
  return { a, b, sessionId, workDir };
}

/** A client of B that resumed A's session through B, and whether A runs a turn in it. */
async function clientOfBOn(fleet: Awaited<ReturnType<typeof sessionOfAListedOnB>>) {
  const { a, b, sessionId, workDir } = fleet;
  const onB = new AcpClient(b.acpUrl, b.token);
  await onB.initialize();
  await onB.resume(sessionId, workDir);
  const turnActiveOnA = async () => (await getJson<View>(a.url, a.token, `/api/sessions/${sessionId}`)).body.turnActive;
  return { onB, turnActiveOnA };
}

describe("routing between the hosts of a fleet", () => {
  it("relays A's session prompted through B (ACP) and answered through C (REST) to A, and places new sessions by _meta", async (context) => {
    const bed = bedOf(context);
    const storeUrl = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-relay-work-");
    const [a, b, c] = await Promise.all([
      startHost(bed, storeUrl, "host-a"),
      startHost(bed, storeUrl, "host-b"),
      startHost(bed, storeUrl, "host-c", { secretIn: "env" }),
    ]);

    // One session of each host's own.
    const own = async (host: typeof a) => {
      const acp = new AcpClient(host.acpUrl, host.token);
      await acp.initialize();
      const sessionId = await acp.newSession(workDir);
      acp.close();
      return sessionId;
    };
    const [sessionA, sessionB, sessionC] = await Promise.all([own(a), own(b), own(c)]);
    for (const host of [b, c]) {
      await eventually(async () => {
        const { sessions } = (await getJson<Sessions>(host.url, host.token, "/api/sessions")).body;
        const owners = new Map(sessions.map((view) => [view.id, view.host]));
        return owners.get(sessionA) === "host-a" && owners.get(sessionB) === "host-b" && owners.get(sessionC) === "host-c";
      }, `${host.url} lists every host's session with its owner`);
    }
    const viewOnA = async () => (await getJson<View>(a.url, a.token, `/api/sessions/${sessionA}`)).body;
    await eventually(async () => (await viewOnA()).holders === 0, "host A's first client let go");

    // Through B: reopened and prompted over ACP; A holds it for B's client, and A's question reaches that client.
    const onB = new AcpClient(b.acpUrl, b.token);
    await onB.initialize();
    await onB.resume(sessionA, workDir);
    await eventually(async () => (await viewOnA()).holders === 1, "host A holds its session for B's client");
    const turn = onB.prompt(sessionA, "/ask May I?");
    await waitUntil(() => onB.asked.includes(sessionA), "B's client was asked A's agent's question");

    // Through C: the question is in C's list; C's answer goes to A, whose agent ends the turn with it. B answers at the
    // same time: the first answer wins fleet-wide (A's store decides), and the other is told it came too late.
    const listedOn = async (host: typeof a) =>
      (await getJson<Questions>(host.url, host.token, "/api/questions")).body.questions.find((candidate) => candidate.sessionId === sessionA);
    await eventually(async () => (await listedOn(c)) !== undefined && (await listedOn(b)) !== undefined, "hosts B and C list A's question");
    const question = (await listedOn(c))!;
    const [fromC, fromB] = await Promise.all([
      send(c.url, c.token, "POST", `/api/questions/${question.id}/answer`, { optionId: "allow" }),
      send(b.url, b.token, "POST", `/api/questions/${question.id}/answer`, { optionId: "deny" }),
    ]);
    const winner = [fromC, fromB].find((answer) => answer.status === 200)!;
    const loser = winner === fromC ? fromB : fromC;
    expect(winner.body).toMatchObject({ id: question.id, sessionId: sessionA, state: "answered" });
    // Refused by A's store (relayed there), or by a host that already saw the question resolved.
    expect([`${loser.status} ${loser.body?.error}`]).toEqual([expect.stringMatching(/^(409 question_already_resolved|404 question_not_found)$/)]);
    const chosen = winner === fromC ? "allow" : "deny";
    expect(await turn).toMatchObject({ stopReason: "end_turn" });
    expect(onB.texts.get(sessionA)).toContain(`You chose: ${chosen}`);

    // The turn ended on A with the answer, in A's journal; C's REST reads the very same journal from A.
    const journalOnA = (await getJson<Events>(a.url, a.token, `/api/sessions/${sessionA}/events`)).body;
    expect(JSON.stringify(journalOnA)).toContain(`You chose: ${chosen}`);
    expect(journalOnA.events.map((event) => event.kind)).toContain("question_resolved");
    expect((await getJson<Events>(c.url, c.token, `/api/sessions/${sessionA}/events`)).body).toEqual(journalOnA);
    expect((await getJson<unknown>(c.url, c.token, `/api/sessions/${sessionA}/agent-state`)).status).toBe(200);
    // Renamed through C: stored on A, and seen on A.
    expect(await send(c.url, c.token, "PATCH", `/api/sessions/${sessionA}`, { title: "named through C" })).toMatchObject({
      status: 200,
      body: { id: sessionA, title: "named through C", host: "host-a" },
    });
    // One hop: a request another host relayed to B for A's session is answered by B, never relayed on.
    const relayedToB = peerHeaders("host-c", { id: "host-b", url: b.url }, "PATCH", `/api/sessions/${sessionA}`);
    expect(await send(b.url, "", "PATCH", `/api/sessions/${sessionA}`, { title: "bounced" }, relayedToB)).toMatchObject({
      status: 409,
      body: { error: "owned_by_other_host" },
    });

    // Loaded through B by another client: A's replay of the journal reaches it through B.
    const loading = new AcpClient(b.acpUrl, b.token);
    await loading.initialize();
    await loading.agent.request(methods.agent.session.load, { sessionId: sessionA, cwd: workDir, mcpServers: [] });
    expect(loading.texts.get(sessionA)).toContain(`You chose: ${chosen}`);
    loading.close();

    // B's client leaves: A's hold for it goes with it.
    onB.close();
    await eventually(async () => (await viewOnA()).holders === 0, "host A released the hold of B's departed client");

    // Placement: a session/new through B naming host C lives on C; an unknown host is named in the error.
    const placing = new AcpClient(b.acpUrl, b.token);
    await placing.initialize();
    const placed = await placing.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [], _meta: { "berth/placement": "host-c" } });
    const placedView = (await getJson<View>(c.url, c.token, `/api/sessions/${placed.sessionId}`)).body;
    expect(placedView).toMatchObject({ host: "host-c", holders: 1, state: "live" });
    // C had its secret in its environment: its agent did not inherit it.
    const agentEnvironment = readFileSync(`/proc/${placedView.pid}/environ`, "utf8");
    expect(agentEnvironment).toContain("BERTH_GROUP=");
    expect(agentEnvironment).not.toContain("BERTH_CLUSTER_SECRET");
    expect(agentEnvironment).not.toContain(SECRET);
    expect(await placing.prompt(placed.sessionId, "placed on C")).toMatchObject({ stopReason: "end_turn" });
    expect(placing.texts.get(placed.sessionId)).toContain("placed on C");
    const unknown = await failure(
      placing.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [], _meta: { "berth/placement": "host-x" } }),
    );
    expect(unknown).toMatchObject({ code: -32602, data: { key: "berth/placement", code: "unknown_host" } });
    expect(unknown?.message).toContain('_meta["berth/placement"] names host "host-x"');
    // The placement's deprecated key (until 0.3.0) still places, and B logs that it was used.
    const placedByOldKey = await placing.agent.request(methods.agent.session.new, {
      cwd: workDir,
      mcpServers: [],
      _meta: { "berth/host": "host-c" },
    });
    expect((await getJson<View>(c.url, c.token, `/api/sessions/${placedByOldKey.sessionId}`)).body).toMatchObject({ host: "host-c", holders: 1 });
    await expect
      .poll(() => b.server.logLines())
      .toContainEqual(expect.objectContaining({ level: 40, host: "host-c", msg: expect.stringContaining('the deprecated _meta["berth/host"]') }));
    const unknownByOldKey = await failure(
      placing.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [], _meta: { "berth/host": "host-x" } }),
    );
    expect(unknownByOldKey).toMatchObject({ code: -32602, data: { key: "berth/host", code: "unknown_host" } });
    await placing.agent.request(methods.agent.session.delete, { sessionId: placedByOldKey.sessionId });
    // Deleted through B (ACP): gone from C.
    await placing.agent.request(methods.agent.session.delete, { sessionId: placed.sessionId });
    // C's one view may list it as ownerless until its next read of the fleet (reads of the fleet are not one snapshot).
    await eventually(async () => (await getJson<unknown>(c.url, c.token, `/api/sessions/${placed.sessionId}`)).status === 404, "host C forgot it");
    placing.close();

    for (const host of [a, b, c]) {
      expect(errorLines(host.server)).toEqual([]);
      // Never logged, never printed.
      expect(host.server.stderr + host.server.stdout).not.toContain(SECRET);
    }
  }, 120_000);

  it("lists every online host's locations on any host, each read from its own host, one hop; a host that cannot be read is named", async (context) => {
    const bed = bedOf(context);
    const storeUrl = await postgres.freshDatabase();
    // Host C heartbeats but registered the URL of a socket that hangs up on every connection: online, and unreadable.
    const hangUp = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => hangUp.listen(0, "127.0.0.1", resolve));
    context.onTestFinished(() => void hangUp.close());
    const nowhere = `http://127.0.0.1:${(hangUp.address() as AddressInfo).port}`;
    const cFleet = { heartbeatInterval: "250ms", hostTtl: "6s", url: nowhere, secret: SECRET };
    const [a, b] = await Promise.all([
      startHost(bed, storeUrl, "host-a"),
      startHost(bed, storeUrl, "host-b"),
      bed.serve(storeUrl, "host-c", bed.tempDir("berth-relay-host-c-"), { fleet: cFleet }),
    ]);
    // A location on A and one on B: a turn of a session of each one's own, each in a directory of its own.
    const locate = async (host: typeof a) => {
      const workDir = bed.tempDir("berth-relay-location-");
      const acp = new AcpClient(host.acpUrl, host.token);
      await acp.initialize();
      const sessionId = await acp.newSession(workDir);
      await acp.prompt(sessionId, "hello");
      acp.close();
      return workDir;
    };
    const [dirA, dirB] = await Promise.all([locate(a), locate(b)]);
    type Locations = { locations: Array<{ host: string | null; directory: string }>; unreachable: Array<{ host: string; error: string }> };
    const read = async (host: typeof a, headers: Record<string, string> = {}) =>
      (await send(host.url, host.token, "GET", "/api/locations", undefined, headers)).body as unknown as Locations;
    const where = (answer: Locations) => answer.locations.map(({ host, directory }) => `${host} ${directory}`).sort();
    await eventually(
      async () =>
        (await getJson<{ hosts: Array<{ id: string; online: boolean }> }>(a.url, a.token, "/api/hosts")).body.hosts.filter((h) => h.online).length ===
        3,
      "A sees the three hosts online",
    );

    for (const host of [a, b]) {
      const answer = await read(host);
      expect(where(answer)).toEqual([`host-a ${dirA}`, `host-b ${dirB}`].sort());
      expect(answer.unreachable).toEqual([{ host: "host-c", error: expect.stringMatching(new RegExp(`^${nowhere} could not be reached: \\S`)) }]);
    }
    // A peer's read is answered with the host's own locations only: one hop, never a fan-out of a fan-out.
    const peer = peerHeaders("host-b", { id: "host-a", url: a.url }, "GET", "/api/locations", { purpose: "read" });
    const asPeer = (await send(a.url, "", "GET", "/api/locations", undefined, peer)).body as unknown as Locations;
    expect(where(asPeer)).toEqual([`host-a ${dirA}`]);
    expect(asPeer.unreachable).toEqual([]);
  }, 90_000);

  it("refuses a wrong or missing cluster secret, and relays nothing with one", async (context) => {
    const { a, b, sessionId, workDir } = await sessionOfAListedOnB(bedOf(context), "another-secret-of-host-b-0123456789");

    // A peer's request without a proof of the secret, with the secret itself, or with a proof made with another
    // secret, is refused, even with A's own token: REST and the WebSocket upgrade alike.
    // B follows A's own sessions with its own secret too (refused, and asked again minutes later): those refusals are not this test's.
    const refusals = () =>
      a.server.logLines().filter((line) => line.msg === "peer host's request refused" && line.path !== "/api/own-sessions/events");
    const refusedBefore = refusals().length;
    const refusedHeaders = (method: string, path: string): Array<Record<string, string>> => [
      { "berth-relayed-by": "host-b" },
      { "berth-relayed-by": "host-b", "berth-cluster-secret": SECRET },
      peerHeaders("host-b", { id: "host-a", url: a.url }, method, path, { secret: "wrong-secret-0123456789" }),
    ];
    for (const headers of refusedHeaders("GET", "/api/sessions")) {
      expect((await send(a.url, a.token, "GET", "/api/sessions", undefined, headers)).status).toBe(401);
    }
    for (const headers of refusedHeaders("GET", new URL(a.acpUrl).pathname)) {
      const upgrade = await new Promise<number>((resolve) => {
        const ws = new WebSocket(a.acpUrl, { headers: { authorization: `Bearer ${a.token}`, ...headers } });
        // Ended by the refusal itself: its error is the expected one.
        ws.on("error", () => undefined);
        ws.once("unexpected-response", (_request, response) => {
          resolve(response.statusCode ?? 0);
          ws.terminate();
        });
        ws.once("open", () => {
          resolve(101);
          ws.close();
        });
      });
      expect(upgrade).toBe(401);
    }
    // With a proof of the right one a peer is let in, once, to the routes it relays and no other.
    const events = `/api/sessions/${sessionId}/events`;
    const proven = peerHeaders("host-b", { id: "host-a", url: a.url }, "GET", events);
    expect((await send(a.url, "", "GET", events, undefined, proven)).status).toBe(200);
    expect((await send(a.url, "", "GET", events, undefined, proven)).status).toBe(401);
    for (const [method, path] of [
      ["GET", "/api/sessions"],
      ["POST", "/api/token/rotate"],
    ] as const) {
      expect(
        await send(a.url, "", method, path, undefined, peerHeaders("host-b", { id: "host-a", url: a.url }, method, path)),
        `${method} ${path}`,
      ).toMatchObject({
        status: 403,
        body: {
          error: "not_relayed",
          // Says what a peer may read, listed from the routes themselves.
          message: `a peer host relays only ACP and a session's REST routes, and reads only GET /api/directory, GET /api/locations, GET /api/own-sessions/events, not ${method} ${path}`,
        },
      });
    }
    // A proof is good for its purpose only: one for following A's sessions opens no relayed route.
    expect(
      await send(a.url, "", "GET", events, undefined, peerHeaders("host-b", { id: "host-a", url: a.url }, "GET", events, { purpose: "live-feed" })),
    ).toMatchObject({
      status: 403,
      body: { error: "not_relayed", message: `a peer host's proof for "live-feed" does not open GET ${events}, which needs one for "relay"` },
    });
    // A's operator is told why each was refused.
    await eventually(async () => refusals().length >= refusedBefore + 7, "A logged the refusals");
    expect(
      refusals()
        .slice(refusedBefore)
        .map((line) => line.reason),
    ).toEqual([
      "no berth-cluster-proof header (a host of an older version sends the secret itself)",
      "no berth-cluster-proof header (a host of an older version sends the secret itself)",
      `a wrong proof (another secret, host, URL than this host's ${a.url}, method or path)`,
      "no berth-cluster-proof header (a host of an older version sends the secret itself)",
      "no berth-cluster-proof header (a host of an older version sends the secret itself)",
      `a wrong proof (another secret, host, URL than this host's ${a.url}, method or path)`,
      "a proof already used",
    ]);

    // B's secret is not A's: the stream of A's own sessions B follows is refused, and both hosts say so.
    await eventually(
      async () =>
        a.server
          .logLines()
          .some((line) => line.msg === "peer host's request refused" && line.path === "/api/own-sessions/events" && line.relayedBy === "host-b"),
      "A refused the stream B follows",
    );
    await eventually(
      async () =>
        b.server
          .logLines()
          .some((line) => line.msg === "a peer host refused this host's stream of its sessions: shown as the shared store knows them"),
      "B logged the refusal",
    );

    // Its relays are refused too, and its client is told why.
    const onB = new AcpClient(b.acpUrl, b.token);
    await onB.initialize();
    const refused = await failure(onB.resume(sessionId, workDir));
    expect(refused?.data).toMatchObject({ code: "owner_host_unreachable", host: "host-a" });
    expect(refused?.message).toContain("401");
    onB.close();
    expect(await send(b.url, b.token, "PATCH", `/api/sessions/${sessionId}`, { title: "renamed on B" })).toMatchObject({
      status: 502,
      body: { error: "owner_host_refused" },
    });
    expect((await getJson<View>(a.url, a.token, `/api/sessions/${sessionId}`)).body).toMatchObject({ title: null });
  }, 90_000);

  // These three run at once, each on hosts of its own: the paused owner is found out only by the relay's pings, two
  // intervals of 5 s (src/server/socket-keepalive.ts), and the two others run meanwhile.
  it.concurrent("relays session/cancel, and ends a relayed turn with a clear error when the owner dies in the middle of it", async (context) => {
    const { expect } = context;
    const fleet = await sessionOfAListedOnB(bedOf(context));
    const { a, b, sessionId } = fleet;
    const { onB, turnActiveOnA } = await clientOfBOn(fleet);
    // session/cancel through B reaches A's agent.
    const cancelled = onB.prompt(sessionId, "/sleep 10m");
    await eventually(turnActiveOnA, "the relayed turn runs on A");
    await onB.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await cancelled).toMatchObject({ stopReason: "cancelled" });
    await eventually(async () => !(await turnActiveOnA()), "the cancelled turn ended on A");

    const turn = failure(onB.prompt(sessionId, "/sleep 10m"));
    await eventually(turnActiveOnA, "the relayed turn runs on A");
    a.server.signal("SIGKILL");
    const error = await turn;
    expect(error?.data).toMatchObject({ code: "owner_host_unreachable", host: "host-a" });
    expect(error?.message).toContain('"host-a"');
    onB.close();
    expect(errorLines(b.server)).toEqual([]);
  }, 90_000);

  it.concurrent("ends a relayed turn with a clear error when the owner is paused (no ping answered), never a hang", async (context) => {
    const { expect } = context;
    const fleet = await sessionOfAListedOnB(bedOf(context));
    const { a, b, sessionId } = fleet;
    const { onB, turnActiveOnA } = await clientOfBOn(fleet);
    const turn = failure(onB.prompt(sessionId, "/sleep 10m"));
    await eventually(turnActiveOnA, "the relayed turn runs on A");
    // Paused, A keeps its sockets open: only the relay's pings tell it is gone.
    a.server.signal("SIGSTOP");
    const error = await turn;
    expect(error?.data).toMatchObject({ code: "owner_host_unreachable", host: "host-a" });
    expect(error?.message).toContain("answered no ping");
    a.server.signal("SIGCONT");
    onB.close();
    expect(errorLines(b.server)).toEqual([]);
  }, 90_000);

  it.concurrent("serves A's session on B's dashboard: opened, prompted and its question answered there, all on A", async (context) => {
    const { expect } = context;
    const fleet = await sessionOfAListedOnB(bedOf(context));
    const { a, b, sessionId } = fleet;
    const launched = await launchBrowser();
    try {
      const opened = await openPage(launched.browser, b.url, `/?token=${b.token}`);
      const { page } = opened;
      await page.locator(`li.session-row[data-session-id="${sessionId}"]`).getByRole("link").click();
      const viewOnA = async () => (await getJson<View>(a.url, a.token, `/api/sessions/${sessionId}`)).body;
      const box = page.getByLabel("Message to the agent");
      await box.fill("/ask Ship it from B?");
      await box.press("Enter");
      // Asked on A: B's session list (B's view) says it waits for you, the question waits in the conversation; answered there, relayed to A.
      await page.locator(`li.session-row[data-session-id="${sessionId}"] .chip`, { hasText: "waiting for you" }).waitFor();
      const question = page.getByRole("log", { name: "Conversation" }).getByRole("group").filter({ hasText: "Ship it from B?" });
      await question.getByRole("button", { name: "Allow" }).click();
      await page.getByRole("log", { name: "Conversation" }).locator(".message.agent", { hasText: "You chose: allow" }).waitFor();
      expect(JSON.stringify((await getJson<Events>(a.url, a.token, `/api/sessions/${sessionId}/events`)).body)).toContain("You chose: allow");
      // The page's ACP link to B resumed the session at A to prompt it: A holds it for the page.
      expect((await viewOnA()).holders).toBe(1);

      // Closed on B's page: A lets go.
      await page.getByRole("button", { name: "Close" }).click();
      await eventually(async () => (await viewOnA()).holders === 0, "host A released the hold of B's page");
      expect(opened.errors).toEqual([]);
      await opened.close();
    } finally {
      const browserPids = await launched.pids().catch(() => []);
      await launched.browser.close();
      expect(await waitUntilGone(browserPids)).toEqual([]);
    }
    expect(errorLines(b.server)).toEqual([]);
    expect(errorLines(a.server)).toEqual([]);
  }, 120_000);
});
