// Adoption when something fails or races (docs/fleet.md, "Adoption"): real `berth serve --store postgres://…` processes
// on one throwaway cluster and one filesystem. The database connection drops in the middle of an adoption's copy; the
// adopter's heartbeats hang before or during it; its view of the fleet is older than the store (the owner back, the
// session deleted); it has not the session's agent. No session is left owned by a host that does not run it. And the
// adopter's event stream during the copy.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { connect, type Sql } from "../../src/store/postgres/connection.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { waitUntil } from "../support/process-table.js";
import { AcpClient, errorLines, eventually, FleetTestBed, getJson, OperatorStream, refusalOf } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
afterEach(() => bed.cleanup());

const HOST_TTL_MS = 2_000;
const fleet = { heartbeatInterval: "250ms", hostTtl: `${HOST_TTL_MS}ms`, adopt: true };
/** Waits until `host` shows the session's owner offline. */
function offlineOn(host: { url: string; token: string }, sessionId: string): Promise<void> {
  return eventually(
    async () => (await getJson<{ hostOnline: boolean }>(host.url, host.token, `/api/sessions/${sessionId}`)).body.hostOnline === false,
    "the host shows the session's owner offline",
  );
}

/**
 * Hosts A and B (adoption on, one conversation directory) on a fresh database; A runs a turn in each of `count` new
 * sessions and is killed; B shows them offline.
 */
async function deadOwner(name: string, count = 1, settings = fleet) {
  const url = await postgres.freshDatabase();
  const dbName = new URL(url).pathname.slice(1);
  const workDir = bed.tempDir(`berth-${name}-work-`);
  const stateDir = join(bed.tempDir(`berth-${name}-shared-`), "conversations");
  const config = { fleet: settings, agents: { demo: { command: process.execPath, args: [demoAgentMain, "--state-dir", stateDir] } } };
  const a = await bed.serve(url, "host-a", bed.tempDir(`berth-${name}-a-`), config);
  const b = await bed.serve(url, "host-b", bed.tempDir(`berth-${name}-b-`), config);
  const onA = new AcpClient(a.acpUrl, a.token);
  await onA.initialize();
  const sessionIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const sessionId = await onA.newSession(workDir);
    expect((await onA.prompt(sessionId, "hello")).stopReason).toBe("end_turn");
    sessionIds.push(sessionId);
  }
  await bed.killHost(a);
  onA.close();
  for (const sessionId of sessionIds) await offlineOn(b, sessionId);
  return { url, dbName, workDir, b, sessionIds, sessionId: sessionIds[0]! };
}

/** What {@link withStrandedLease} hands on: host B, the session, and the connections that lock its journal and its row. */
interface Stranded {
  readonly b: Awaited<ReturnType<typeof deadOwner>>["b"];
  readonly workDir: string;
  readonly sessionId: string;
  /** The epoch of the lease that names B. */
  readonly epoch: number;
  readonly journalLock: Sql;
  readonly rowLock: Sql;
  /** A connection of the test's own, for reads. */
  readonly sql: Sql;
  leaseNow(): Promise<{ owner_host: string | null; epoch: number }>;
  /** Whether a statement of B with `sql` in it waits on a lock. */
  waiting(sql: string): Promise<boolean>;
  /** An ACP client of B, initialized, closed after the test. */
  client(): Promise<AcpClient>;
}

/**
 * Host A is killed; B's adoption of its session fails because the database connection drops in the middle of the copy,
 * and so does B's release of the lease. The database comes back while the session's row is still locked (`rowLock`),
 * and the journal too (`journalLock`): the lease names B, which does not run the session, B's heartbeat's release of it
 * waits on the row, and B lists the session as no host's. `body` goes on from there; everything is ended after it.
 */
async function withStrandedLease(name: string, settings: typeof fleet, body: (stranded: Stranded) => Promise<void>): Promise<void> {
  const { url, workDir, b, dbName, sessionId } = await deadOwner(name, 1, settings);
  const journalLock = connect(url, { max: 1 });
  const rowLock = connect(url, { max: 1 });
  const poller = connect(url, { max: 1 });
  const admin = connect(postgres.cluster.url, { max: 1 });
  const clients: AcpClient[] = [];
  const client = async () => {
    const acp = new AcpClient(b.acpUrl, b.token);
    clients.push(acp);
    await acp.initialize();
    return acp;
  };
  const leaseNow = async () =>
    (await poller<{ owner_host: string | null; epoch: number }[]>`SELECT owner_host, epoch FROM sessions WHERE id = ${sessionId}`)[0]!;
  const waiting = async (sql: string) =>
    (
      await poller<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = ${dbName} AND wait_event_type = 'Lock' AND query LIKE ${`%${sql}%`}`
    )[0]!.n > 0;
  try {
    const keep = await Promise.all(
      [journalLock, rowLock, poller].map(async (sql) => (await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]!.pid),
    );
    // The copy waits on the journal's table: the connection drops while it reads.
    await journalLock.unsafe("BEGIN");
    await journalLock.unsafe("LOCK TABLE events IN ACCESS EXCLUSIVE MODE");
    const resumed = refusalOf((await client()).resume(sessionId, workDir));
    await eventually(
      async () => (await leaseNow()).owner_host === "host-b" && (await waiting("FROM events")),
      "B took the lease and its copy waits on the journal",
    );

    // The session's row too: a release sent on a connection whose end is still on its way waits on it, and ends with it.
    await rowLock.unsafe("BEGIN");
    await rowLock`SELECT 1 FROM sessions WHERE id = ${sessionId} FOR UPDATE`;
    // A failover, a network cut: B's connections end, and new ones are refused for a moment (its release fails too).
    await admin.unsafe(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS false`);
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${dbName} AND pid NOT IN ${admin(keep)}`;
    // The client is told the store is unavailable (retry later), not an internal error.
    const failure = await resumed;
    expect(failure).toMatchObject({ code: -32603, data: { code: "store_unavailable" } });
    expect(failure?.message).toContain(`session "${sessionId}" was not adopted: copying it from the shared store: `);
    await waitUntil(
      () => errorLines(b.server).some((line) => line.sessionId === sessionId && String(line.msg).startsWith("could not release the lease")),
      "B logged that it could not release the lease",
    );
    await admin.unsafe(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`);
    // The database is back and the lease names B, which does not run the session (its heartbeat's release waits on the
    // row, still locked): B shows the session meanwhile, as no host's, never missing from its views (nor from a resume
    // that comes as the release commits).
    await eventually(() => waiting("UPDATE sessions SET owner_host = NULL"), "B's heartbeat's release of the lease waits on the session's row");
    await eventually(async () => {
      const { status, body } = await getJson<{ host: string | null }>(b.url, b.token, `/api/sessions/${sessionId}`);
      return status === 200 && body.host === null;
    }, "B shows the session whose lease it holds but does not run, as no host's");
    const { owner_host: owner, epoch } = await leaseNow();
    expect(owner).toBe("host-b");
    await body({ b, workDir, sessionId, epoch, journalLock, rowLock, sql: poller, leaseNow, waiting, client });
  } finally {
    for (const acp of clients) acp.close();
    await admin.unsafe(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`).catch(() => undefined);
    for (const lock of [journalLock, rowLock]) await lock.unsafe("ROLLBACK").catch(() => undefined);
    await Promise.all([journalLock.end(), rowLock.end(), poller.end(), admin.end()]);
  }
}

describe("adoption that fails", () => {
  it("a copy that fails because the database connection dropped leaves no lease behind: the adopter releases it and adopts it later", async () => {
    await withStrandedLease("stuck", fleet, async ({ b, workDir, sessionId, journalLock, rowLock, leaseNow, client }) => {
      await rowLock.unsafe("ROLLBACK");
      await journalLock.unsafe("ROLLBACK");
      // B's heartbeat finds the lease it does not run and releases it; any host may adopt it.
      await eventually(async () => (await leaseNow()).owner_host === null, "B released the lease it does not run");
      const again = await client();
      await again.resume(sessionId, workDir);
      expect((await again.prompt(sessionId, "after the failover")).stopReason).toBe("end_turn");
      expect((await leaseNow()).owner_host).toBe("host-b");
      expect((await getJson<{ host: string }>(b.url, b.token, `/api/sessions/${sessionId}`)).body.host).toBe("host-b");
    });
  }, 120_000);

  it("a client resuming the session while B's release of its lease waits: B adopts it at a new epoch, and it stays B's whichever commits first", async () => {
    await withStrandedLease("race", fleet, async ({ b, workDir, sessionId, epoch, journalLock, rowLock, sql, leaseNow, waiting, client }) => {
      // B's heartbeats go on while its release waits on the row: it does not fence itself (nor refuse to adopt).
      const fences = () => errorLines(b.server).filter((line) => String(line.msg).startsWith("no heartbeat reached the shared store")).length;
      const fencesBefore = fences();
      const since = (await sql<{ ms: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8 AS ms`)[0]!.ms;
      await eventually(async () => {
        const beat = (await sql<{ ms: number }[]>`SELECT (extract(epoch FROM heartbeat_at) * 1000)::int8 AS ms FROM hosts WHERE id = 'host-b'`)[0]!
          .ms;
        return beat > since + HOST_TTL_MS;
      }, "B heartbeats more than a TTL after its release began waiting on the row");
      expect(await waiting("UPDATE sessions SET owner_host = NULL")).toBe(true);
      expect(fences()).toBe(fencesBefore);

      await journalLock.unsafe("ROLLBACK");
      const onB = await client();
      let answered = false;
      const resumed = refusalOf(onB.resume(sessionId, workDir)).finally(() => (answered = true));
      // B takes the lease at a new epoch, so its acquisition waits on the row behind the release (answered at once before).
      await eventually(
        async () => answered || (await waiting("UPDATE sessions s SET owner_host")),
        "B's acquisition of the lease waits on the session's row",
      );
      await rowLock.unsafe("ROLLBACK");
      expect(await resumed).toBeUndefined();
      expect((await onB.prompt(sessionId, "adopted as its lease was released")).stopReason).toBe("end_turn");
      const lease = await leaseNow();
      expect(lease.owner_host).toBe("host-b");
      expect(lease.epoch).toBeGreaterThan(epoch);
      // The release committed first (then B took the lease from no host) or matched nothing: either way no failure.
      await waitUntil(
        () =>
          b.server
            .logLines()
            .some(
              (line) =>
                line.sessionId === sessionId &&
                line.epoch === epoch &&
                (line.msg === "released the lease of a session this host does not run: any host may adopt it" ||
                  line.msg === "the lease of a session this host does not run moved on before its release: nothing to release"),
            ),
        "B's release of the lease ended",
      );
      expect(b.server.logLines().filter((line) => line.kind === "session_adopted" && line.sessionId === sessionId)).toHaveLength(1);
      expect(b.server.logLines().filter((line) => line.kind === "session_lost")).toEqual([]);
      expect((await getJson<{ host: string }>(b.url, b.token, `/api/sessions/${sessionId}`)).body.host).toBe("host-b");
    });
  }, 120_000);

  it("a host whose heartbeats hang adopts nothing: before taking the lease it refuses, during the copy it gives the session up", async () => {
    const { url, workDir, b, sessionId } = await deadOwner("fenced");

    const hostLock = connect(url, { max: 1 });
    const journalLock = connect(url, { max: 1 });
    const poller = connect(url, { max: 1 });
    const onB = new AcpClient(b.acpUrl, b.token);
    const leaseNow = async () =>
      (await poller<{ owner_host: string | null; epoch: number }[]>`SELECT owner_host, epoch FROM sessions WHERE id = ${sessionId}`)[0]!;
    const fences = () => errorLines(b.server).filter((line) => String(line.msg).startsWith("no heartbeat reached the shared store")).length;
    const heartbeatsHang = async (fencesBefore: number) => {
      await hostLock.unsafe("BEGIN");
      await hostLock`SELECT 1 FROM hosts WHERE id = 'host-b' FOR UPDATE`;
      await waitUntil(() => fences() > fencesBefore, "B fenced itself (no heartbeat within the TTL)", 15_000);
    };
    const heartbeatsAgain = async () => {
      await hostLock.unsafe("ROLLBACK");
      const { released } = (await poller<{ released: Date }[]>`SELECT now() AS released`)[0]!;
      // The beat that waited on the lock counts from when it was sent, so B stays cut off until a beat sent after the
      // lock is gone gets through. Beats go one at a time: a third after the release is stored only once the second's
      // answer reached B.
      const beats = new Set<number>();
      await eventually(async () => {
        const { at } = (await poller<{ at: Date }[]>`SELECT heartbeat_at AS at FROM hosts WHERE id = 'host-b'`)[0]!;
        if (at > released) beats.add(at.getTime());
        return beats.size >= 3;
      }, "B heartbeats again");
    };
    try {
      await onB.initialize();
      // Fenced before it starts: B takes nothing.
      await heartbeatsHang(0);
      const refused = await refusalOf(onB.resume(sessionId, workDir));
      expect(refused).toMatchObject({ code: -32603, data: { code: "store_unavailable" } });
      expect(refused?.message).toContain("no heartbeat of this host reached the shared store within fleet.hostTtl");
      expect(await leaseNow()).toEqual({ owner_host: "host-a", epoch: 1 });
      await heartbeatsAgain();

      // Fenced while it copies: B took the lease, its heartbeats stop, then the copy ends: it gives the session up.
      await journalLock.unsafe("BEGIN");
      await journalLock.unsafe("LOCK TABLE events IN ACCESS EXCLUSIVE MODE");
      const during = refusalOf(onB.resume(sessionId, workDir));
      await eventually(async () => (await leaseNow()).owner_host === "host-b", "B took the lease");
      await heartbeatsHang(1);
      await journalLock.unsafe("ROLLBACK");
      const gaveUp = await during;
      expect(gaveUp).toMatchObject({ code: -32603, data: { code: "store_unavailable" } });
      expect(gaveUp?.message).toContain("during the copy, so it gave the session up");
      expect(b.server.logLines().filter((line) => line.kind === "session_adopted")).toEqual([]);
      await heartbeatsAgain();
      // Its heartbeat releases the lease; opened again, the session is adopted and runs.
      await eventually(async () => (await leaseNow()).owner_host === null, "B released the lease it gave up");
      await eventually(async () => (await getJson(b.url, b.token, `/api/sessions/${sessionId}`)).status === 200, "B lists the session");
      await onB.resume(sessionId, workDir);
      expect((await onB.prompt(sessionId, "adopted at last")).stopReason).toBe("end_turn");
    } finally {
      onB.close();
      await hostLock.unsafe("ROLLBACK").catch(() => undefined);
      await journalLock.unsafe("ROLLBACK").catch(() => undefined);
      await Promise.all([hostLock.end(), journalLock.end(), poller.end()]);
    }
  }, 120_000);

  it("a view older than the store: an owner back keeps its session (409, use that host), a session deleted meanwhile is not found", async () => {
    const { url, workDir, b, dbName, sessionIds } = await deadOwner("stale", 2);
    const [back, deleted] = sessionIds as [string, string];

    const locker = connect(url, { max: 1 });
    const admin = connect(url, { max: 1 });
    const onB = new AcpClient(b.acpUrl, b.token);
    const waiting = async () =>
      (await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${dbName} AND wait_event_type = 'Lock'`)[0]!.n;
    try {
      await onB.initialize();
      // B's view of the fleet stops there: its next read waits on the questions' table.
      const viewWaits = async () => {
        await locker.unsafe("BEGIN");
        await locker.unsafe("LOCK TABLE questions IN ACCESS EXCLUSIVE MODE");
        await eventually(async () => (await waiting()) > 0, "B's view of the fleet waits");
      };
      await viewWaits();

      // A session is deleted while B takes it: not found.
      await locker`DELETE FROM sessions WHERE id = ${deleted}`;
      const gone = refusalOf(onB.resume(deleted, workDir));
      await eventually(async () => (await waiting()) > 1, "B's lease waits on the deleted session's row");
      await locker.unsafe("COMMIT");
      const refusal = await gone;
      // ACP's "Resource not found" (-32002), as for any unknown session.
      expect(refusal).toMatchObject({ code: -32002, message: "Resource not found" });
      await eventually(async () => (await getJson(b.url, b.token, `/api/sessions/${deleted}`)).status === 404, "B no longer lists it");

      // A heartbeats again (as far as the database knows) while B still shows it offline and tries: A keeps its session.
      await viewWaits();
      await admin`UPDATE hosts SET heartbeat_at = clock_timestamp() WHERE id = 'host-a'`;
      const kept = await refusalOf(onB.resume(back, workDir));
      expect(kept).toMatchObject({ code: -32600, data: { code: "owned_by_other_host" } });
      expect(kept?.message).toContain(`session "${back}" is owned by host "host-a"`);
      expect(kept?.message).toContain("use that host");
      expect((await admin`SELECT owner_host, epoch FROM sessions WHERE id = ${back}`)[0]).toEqual({ owner_host: "host-a", epoch: 1 });
      expect(b.server.logLines().filter((line) => line.kind === "session_adopted")).toEqual([]);
    } finally {
      onB.close();
      await locker.unsafe("ROLLBACK").catch(() => undefined);
      await Promise.all([locker.end(), admin.end()]);
    }
  }, 120_000);

  it("a host without the session's agent refuses to adopt it before taking anything: the lease, the question and the turn stay as they were", async () => {
    const url = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-unk-work-");
    const stateDir = join(bed.tempDir("berth-unk-shared-"), "conversations");
    const agent = { command: process.execPath, args: [demoAgentMain, "--state-dir", stateDir] };
    const a = await bed.serve(url, "host-a", bed.tempDir("berth-unk-a-"), { fleet, agents: { special: agent }, defaultAgent: "special" });
    const b = await bed.serve(url, "host-b", bed.tempDir("berth-unk-b-"), { fleet, agents: { demo: agent } });
    const onA = new AcpClient(a.acpUrl, a.token);
    await onA.initialize();
    const sessionId = await onA.newSession(workDir);
    void onA.prompt(sessionId, "/ask May I?").catch(() => undefined);
    await waitUntil(() => onA.asked.length > 0, "A's agent asked");
    await bed.killHost(a);
    onA.close();
    await offlineOn(b, sessionId);

    const onB = new AcpClient(b.acpUrl, b.token);
    const sql = connect(url, { max: 1 });
    try {
      await onB.initialize();
      const refusal = await refusalOf(onB.resume(sessionId, workDir));
      expect(refusal).toMatchObject({ code: -32600, data: { code: "owned_by_other_host" } });
      expect(refusal?.message).toContain('this host has no agent "special"');
      expect((await sql`SELECT owner_host, epoch FROM sessions WHERE id = ${sessionId}`)[0]).toEqual({ owner_host: "host-a", epoch: 1 });
      expect((await sql`SELECT state FROM questions WHERE session_id = ${sessionId}`).map((row) => row.state)).toEqual(["pending"]);
      const kinds = (await sql`SELECT kind FROM events WHERE session_id = ${sessionId} ORDER BY seq`).map((row) => row.kind);
      expect(kinds.filter((kind) => kind === "turn_started")).toHaveLength(1);
      expect(kinds).not.toContain("turn_ended");
      expect(kinds).not.toContain("question_resolved");
      expect((await getJson<{ host: string; hostOnline: boolean }>(b.url, b.token, `/api/sessions/${sessionId}`)).body).toMatchObject({
        host: "host-a",
        hostOnline: false,
      });
      expect(b.server.logLines().filter((line) => line.kind === "session_adopted")).toEqual([]);
    } finally {
      await sql.end();
      onB.close();
    }
  }, 120_000);
});

describe("an adoption seen on the adopter's event stream", () => {
  it("shows the session as the offline owner's during the copy (never session_deleted), then as the adopter's", async () => {
    const { url, workDir, b, sessionId } = await deadOwner("flicker");

    const stream = await OperatorStream.open(b.url, b.token);
    const locker = connect(url, { max: 1 });
    const poller = connect(url, { max: 1 });
    const onB = new AcpClient(b.acpUrl, b.token);
    try {
      await locker.unsafe("BEGIN");
      await locker.unsafe("LOCK TABLE events IN ACCESS EXCLUSIVE MODE");
      await onB.initialize();
      const resumed = refusalOf(onB.resume(sessionId, workDir));
      await eventually(
        async () => (await poller`SELECT owner_host FROM sessions WHERE id = ${sessionId}`)[0]!.owner_host === "host-b",
        "B took the lease; its copy waits on the journal",
      );
      // A refresh of B's view of the fleet that read the lease taken: B's heartbeat after it is on B's host list.
      const now = (await poller<{ now: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8 AS now`)[0]!.now;
      await eventually(async () => {
        const hosts = (await getJson<{ hosts: Array<{ id: string; heartbeatAt: number }> }>(b.url, b.token, "/api/hosts")).body.hosts;
        return hosts.some((host) => host.id === "host-b" && host.heartbeatAt > Number(now));
      }, "B's view of the fleet was read after it took the lease");
      expect(stream.events<{ id: string }>("session_deleted").filter((event) => event.id === sessionId)).toEqual([]);
      const during = await getJson<{ host: string; hostOnline: boolean }>(b.url, b.token, `/api/sessions/${sessionId}`);
      expect(during.status).toBe(200);
      expect(during.body).toMatchObject({ host: "host-a", hostOnline: false });

      await locker.unsafe("ROLLBACK");
      expect(await resumed).toBeUndefined();
      await waitUntil(
        () => stream.events<{ id: string; host: string }>("session").some((view) => view.id === sessionId && view.host === "host-b"),
        "B's stream shows the session as B's",
      );
      expect(stream.events<{ id: string }>("session_deleted").filter((event) => event.id === sessionId)).toEqual([]);
    } finally {
      onB.close();
      stream.close();
      await locker.unsafe("ROLLBACK").catch(() => undefined);
      await Promise.all([locker.end(), poller.end()]);
    }
  }, 120_000);
});
