import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { StoreOpenError } from "../../src/store/errors.js";
import { connect, type Sql } from "../../src/store/postgres/connection.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import {
  HostSupersededError,
  LeaseHeldError,
  StaleEpochError,
  type Lease,
  type StoreBackend,
  type StoreChange,
} from "../../src/store/store-backend.js";
import { waitUntil } from "../support/process-table.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";

/** What only a shared database has: several hosts racing for a session, a fence under a lock wait, hosts migrating together. */
describe("PostgreSQL: hosts sharing one database", () => {
  const postgres = usePostgresCluster();
  const opened: Array<StoreBackend | Sql> = [];
  afterEach(async () => {
    for (const client of opened.splice(0)) await ("kind" in client ? client.close() : client.end());
  });
  const open = async (url: string, hostTtlMs?: number) => {
    const backend = await PostgresBackend.open(url, { maxConnections: 2, hostTtlMs });
    opened.push(backend);
    return backend;
  };
  const admin = (url: string) => {
    const sql = connect(url, { max: 1 });
    opened.push(sql);
    return sql;
  };
  const T0 = Date.UTC(2025, 0, 1);
  const event = { kind: "update", payload: { n: 1 }, at: T0 };

  /** A session of host A, whose heartbeat is then an hour old. */
  async function silentOwner(url: string) {
    const a = await open(url);
    await a.registerHost({ id: "host-a", url: null });
    const lease = await a.createSession({ id: "s", agent: "demo", cwd: "/w", createdAt: T0 }, "host-a");
    await admin(url)`UPDATE hosts SET heartbeat_at = heartbeat_at - interval '1 hour' WHERE id = 'host-a'`;
    return { a, lease };
  }

  it("two hosts racing for a silent host's session: exactly one takes it, at one higher epoch", async () => {
    const url = await postgres.freshDatabase();
    await silentOwner(url);
    const [b, c] = [await open(url), await open(url)];
    await b.registerHost({ id: "host-b", url: null });
    await c.registerHost({ id: "host-c", url: null });
    const results = await Promise.allSettled([b.acquireLease("s", "host-b"), c.acquireLease("s", "host-c")]);
    const won = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const lost = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
    expect(won).toHaveLength(1);
    expect(won[0]!.epoch).toBe(2);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(LeaseHeldError);
    expect(await b.getLease("s")).toEqual(won[0]);
  });

  it("a host is alive by its own TTL, whatever the TTL of the host that looks: its session is taken only past it", async () => {
    const url = await postgres.freshDatabase();
    const a = await open(url, 60_000);
    await a.registerHost({ id: "host-a", url: null });
    await a.createSession({ id: "s", agent: "demo", cwd: "/w", createdAt: T0 }, "host-a");
    const b = await open(url, 1_000);
    await b.registerHost({ id: "host-b", url: null });
    // A's last heartbeat is older than B's TTL, well within A's own.
    await admin(url)`UPDATE hosts SET heartbeat_at = heartbeat_at - interval '5 seconds' WHERE id = 'host-a'`;
    expect((await b.listHosts()).find((host) => host.id === "host-a")?.alive).toBe(true);
    await expect(b.acquireLease("s", "host-b")).rejects.toBeInstanceOf(LeaseHeldError);
    // Past A's own TTL, any host may take it.
    await admin(url)`UPDATE hosts SET heartbeat_at = heartbeat_at - interval '2 minutes' WHERE id = 'host-a'`;
    expect((await b.listHosts()).find((host) => host.id === "host-a")?.alive).toBe(false);
    expect(await b.acquireLease("s", "host-b")).toEqual({ sessionId: "s", hostId: "host-b", epoch: 2 });
  });

  it("every connection bounds a statement and an idle transaction, so that a frozen host holds no row for ever", async () => {
    const sql = admin(await postgres.freshDatabase());
    expect(await sql`SHOW statement_timeout`).toEqual([{ statement_timeout: "1min" }]);
    expect(await sql`SHOW idle_in_transaction_session_timeout`).toEqual([{ idle_in_transaction_session_timeout: "30s" }]);
  });

  it("a host id restarted in another process: the earlier process can renew nothing, take nothing, create nothing, write nothing", async () => {
    const url = await postgres.freshDatabase();
    const old = await open(url);
    await old.registerHost({ id: "host-a", url: null });
    const oldLease = await old.createSession({ id: "s", agent: "demo", cwd: "/w", createdAt: T0 }, "host-a");
    // The same id registers again from a new process (a restart; the old one was paused, not dead).
    const fresh = await open(url);
    expect((await fresh.registerHost({ id: "host-a", url: null })).incarnation).toBe(2);
    const [lease] = await fresh.listLeases("host-a");
    expect(lease).toEqual({ sessionId: "s", hostId: "host-a", epoch: 2 });

    expect(await old.heartbeat("host-a")).toBe(false);
    await expect(old.acquireLease("s", "host-a")).rejects.toBeInstanceOf(HostSupersededError);
    await expect(old.createSession({ id: "t", agent: "demo", cwd: "/w", createdAt: T0 }, "host-a")).rejects.toBeInstanceOf(HostSupersededError);
    const [stale] = await old.write([{ lease: oldLease, events: [event] }]);
    expect(stale).toMatchObject({ ok: false, error: expect.any(StaleEpochError) });
    expect(await fresh.heartbeat("host-a")).toBe(true);
    const taken = await fresh.acquireLease("s", "host-a");
    expect(taken).toEqual({ ...lease, epoch: 3 });
    const question = { id: "q", kind: "permission" as const, request: {}, askedAt: T0 };
    expect(await fresh.write([{ lease: taken, events: [event], question }])).toEqual([{ ok: true, seqs: [1] }]);
    expect(await fresh.getSession("t")).toBeUndefined();
    // Nor records, process groups, agent profiles or pruning: every write of the earlier process is refused.
    const group = { pgid: 4242, kind: "agent" as const, label: "demo", startTicks: 7, bootId: "boot", startedAt: T0 };
    await fresh.addGroup("host-a", group);
    const refusals = await Promise.allSettled([
      old.appendRecord("host-a", "child_acquired", {}, T0),
      old.addGroup("host-a", { ...group, pgid: 4343 }),
      old.deleteGroup("host-a", 4242),
      old.putAgentProfile("host-a", { agent: "demo", command: "demo --acp", initialize: {}, at: T0 }),
      old.pruneRecordsBefore("host-a", T0 + 1),
      old.orphanPendingQuestions("host-a", "host restarted", T0 + 1),
    ]);
    expect(refusals.map((result) => result.status === "rejected" && result.reason instanceof HostSupersededError)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    // The question is the new process's to orphan or answer: still pending, the journal unmoved.
    expect((await fresh.listPendingQuestions("s")).map((q) => q.id)).toEqual(["q"]);
    expect(await fresh.lastSeq("s")).toBe(1);
    expect(await fresh.listGroups("host-a")).toEqual([group]);
    expect(await fresh.getAgentProfile("demo")).toBeUndefined();
    const record = await fresh.appendRecord("host-a", "child_acquired", {}, T0);
    expect(await fresh.pruneRecordsBefore("host-a", T0)).toBe(0);
    expect((await fresh.recentRecords(10)).map((r) => r.id)).toEqual([record]);
  });

  it("a write waiting on the session's lock while another host takes it over is refused once the takeover commits", async () => {
    const url = await postgres.freshDatabase();
    const { a, lease } = await silentOwner(url);
    const takeover = admin(url);
    const watcher = admin(url);
    let stale: Promise<unknown> | undefined;
    await takeover.begin(async (tx) => {
      // Host B's takeover holds the session's row: A's write (woken from SIGSTOP) must wait for it...
      await tx`UPDATE sessions SET owner_host = 'host-b', epoch = epoch + 1 WHERE id = 's'`;
      stale = a.write([{ lease, events: [event] }]);
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [waiting] = await watcher<{ count: number }[]>`SELECT count(*)::int AS count FROM pg_locks WHERE NOT granted`;
        if (waiting!.count > 0) break;
        if (Date.now() > deadline) throw new Error("the stale write never waited on the session's lock");
        await sleep(10);
      }
    });
    // ...and, once the takeover committed, find the epoch changed: refused, nothing stored.
    const [outcome] = (await stale) as Awaited<ReturnType<StoreBackend["write"]>>;
    expect(outcome?.ok).toBe(false);
    expect(outcome?.ok === false && outcome.error).toBeInstanceOf(StaleEpochError);
    expect(await a.lastSeq("s")).toBe(0);
    expect(await a.readEvents("s")).toEqual([]);
  });

  it("an answer waiting on the session's lock while another host takes it over is refused once the takeover commits", async () => {
    const url = await postgres.freshDatabase();
    const { a, lease } = await silentOwner(url);
    const question = { id: "q", kind: "permission" as const, request: {}, askedAt: T0 };
    const [asked] = await a.write([{ lease, events: [], question }]);
    expect(asked?.ok).toBe(true);
    const takeover = admin(url);
    const watcher = admin(url);
    let stale: Promise<unknown> | undefined;
    await takeover.begin(async (tx) => {
      // Host B's takeover holds the session's row: A's answer (woken from SIGSTOP) must wait for it...
      await tx`UPDATE sessions SET owner_host = 'host-b', epoch = epoch + 1 WHERE id = 's'`;
      stale = a
        .resolveQuestion({ questionId: "q", state: "answered", answer: { optionId: "allow" }, at: T0 }, lease)
        .catch((error: unknown) => error);
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [waiting] = await watcher<{ count: number }[]>`SELECT count(*)::int AS count FROM pg_locks WHERE NOT granted`;
        if (waiting!.count > 0) break;
        if (Date.now() > deadline) throw new Error("the stale answer never waited on the session's lock");
        await sleep(10);
      }
    });
    // ...and, once the takeover committed, find the epoch changed: refused, the question still pending, no event.
    expect(await stale).toBeInstanceOf(StaleEpochError);
    expect(await a.getQuestion("q")).toMatchObject({ state: "pending" });
    expect(await a.readEvents("s")).toEqual([]);
    expect(await a.lastSeq("s")).toBe(0);
  });

  // A heartbeat releasing a lease its host does not run while a client makes the host adopt that session: whichever of
  // the release and the acquisition commits second matches nothing, so the lease the host adopts under stays its own.
  for (const first of ["release", "acquire"] as const) {
    it(`a release of a host's lease and the host's acquisition of it waiting on the session's row (${first} first): the lease acquired stands`, async () => {
      const url = await postgres.freshDatabase();
      const a = await open(url);
      await a.registerHost({ id: "host-a", url: null });
      const lease = await a.createSession({ id: "s", agent: "demo", cwd: "/w", createdAt: T0 }, "host-a");
      const locker = admin(url);
      const watcher = admin(url);
      const settled = (promise: Promise<unknown>) => {
        const state = { done: false };
        void promise.then(
          () => (state.done = true),
          () => (state.done = true),
        );
        return state;
      };
      /** Until `count` statements wait on a lock, or `attempt` is answered without waiting (as it was before the fix). */
      const waitingOrDone = async (count: number, attempt: { done: boolean }) => {
        const deadline = Date.now() + 10_000;
        for (;;) {
          const [waiting] = await watcher<{ count: number }[]>`SELECT count(*)::int AS count FROM pg_locks WHERE NOT granted`;
          if (waiting!.count >= count || attempt.done) return;
          if (Date.now() > deadline) throw new Error(`${count} statement(s) never waited on the session's row`);
          await sleep(10);
        }
      };
      let release: Promise<unknown> | undefined;
      let acquire: Promise<Lease> | undefined;
      await locker.begin(async (tx) => {
        await tx`SELECT 1 FROM sessions WHERE id = 's' FOR UPDATE`;
        const start = { release: () => (release = a.giveUpLease(lease)), acquire: () => (acquire = a.acquireLease("s", "host-a")) };
        const second = first === "release" ? "acquire" : "release";
        await waitingOrDone(1, settled(start[first]()));
        await waitingOrDone(2, settled(start[second]()));
      });
      const released = await release!.then(
        () => undefined,
        (error: unknown) => error,
      );
      const taken = await acquire!;
      // The release committed first (the session no one's, then taken from there) or matched nothing.
      expect(released === undefined || released instanceof StaleEpochError).toBe(true);
      expect(taken.epoch).toBe(released === undefined ? 3 : 2);
      expect(await a.getLease("s")).toEqual(taken);
      expect(await a.write([{ lease: taken, events: [event] }])).toEqual([{ ok: true, seqs: [1] }]);
    });
  }

  it("a journal batch notifies once, naming each session it wrote; one whose list would not fit one notification takes several, never missed", async () => {
    const url = await postgres.freshDatabase();
    const a = await open(url);
    await a.registerHost({ id: "host-a", url: null });
    const leases: Lease[] = [];
    for (let n = 0; n < 150; n++) leases.push(await a.createSession({ id: `session-${n}`, agent: "demo", cwd: "/w", createdAt: T0 }, "host-a"));
    const listener = await open(url);
    const heard: StoreChange[] = [];
    const payloads: string[] = [];
    const stop = await listener.subscribe((change) => heard.push(change));
    const raw = admin(url);
    const { unlisten } = await raw.listen("berth_changes", (payload) => payloads.push(payload));
    try {
      const written = async (units: readonly Lease[]) => {
        const outcomes = await a.write(units.map((lease) => ({ lease, events: [event] })));
        expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
      };
      await written(leases.slice(0, 2));
      await waitUntil(() => heard.length === 2, "the listener heard both sessions of the batch");
      expect(heard).toEqual([
        { type: "events", sessionId: "session-0", lastSeq: 1 },
        { type: "events", sessionId: "session-1", lastSeq: 1 },
      ]);
      // Both in one notification: one transaction, one NOTIFY.
      await waitUntil(() => payloads.length === 1, "the raw listener heard the batch");
      // 150 sessions' changes are more than 8,000 bytes: two notifications, each within the limit, name every session.
      await written(leases);
      await waitUntil(() => heard.length === 152, "the listener heard every session of the large batch");
      expect(heard.slice(2)).toEqual(leases.map((lease, n) => ({ type: "events", sessionId: lease.sessionId, lastSeq: n < 2 ? 2 : 1 })));
      await waitUntil(() => payloads.length === 3, "the raw listener heard the large batch");
      expect(payloads.slice(1).map((payload) => Buffer.byteLength(payload) < 8_000)).toEqual([true, true]);
    } finally {
      await unlisten();
      await stop();
    }
  });

  it("hosts starting together migrate the schema once; a newer schema runs if its newer steps allow this Berth, else is refused", async () => {
    const url = await postgres.freshDatabase();
    await Promise.all([open(url), open(url), open(url)]);
    const sql = admin(url);
    // Step 6 only rebuilds two indexes: a Berth that knows version 5 runs on it.
    expect(await sql`SELECT version, oldest_reader FROM berth_schema ORDER BY version`).toEqual(
      [1, 2, 3, 4, 5, 5].map((reader, n) => ({ version: n + 1, oldest_reader: reader })),
    );

    // A step from a later Berth that older ones can run on (an index, say): this Berth opens the database.
    await sql`INSERT INTO berth_schema (version, description, oldest_reader) VALUES (7, 'from the future, readable by 6', 6)`;
    await open(url);
    // One that needs a Berth that knows it: refused, naming both versions.
    await sql`INSERT INTO berth_schema (version, description, oldest_reader) VALUES (8, 'from the future', 8)`;
    const before = await sql`SELECT * FROM berth_schema ORDER BY version`;
    const refused = await PostgresBackend.open(url).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StoreOpenError);
    expect((refused as Error).message).toMatch(
      /schema version 8, newer than the latest this Berth knows \(6\), and it needs a Berth that knows version 8 or later/,
    );
    // Nothing was migrated or changed by the refusal.
    expect(await sql`SELECT * FROM berth_schema ORDER BY version`).toEqual(before);
  });

  it("a database migrated before steps recorded their oldest reader gets them; a newer step without one is refused", async () => {
    const url = await postgres.freshDatabase();
    await open(url);
    const sql = admin(url);
    await sql`ALTER TABLE berth_schema DROP COLUMN oldest_reader`;
    await open(url);
    expect(await sql`SELECT version, oldest_reader FROM berth_schema ORDER BY version`).toEqual(
      [1, 2, 3, 4, 5, 5].map((reader, n) => ({ version: n + 1, oldest_reader: reader })),
    );
    await sql`INSERT INTO berth_schema (version, description) VALUES (99, 'from the future')`;
    await expect(PostgresBackend.open(url)).rejects.toThrow(/needs a Berth that knows version 99 or later/);
  });

  it("a URL that is not PostgreSQL's, or a server that is not there, fails with the URL named and its password hidden", async () => {
    expect(() => connect("mysql://me@localhost/berth")).toThrow(/is not a postgres:\/\/ URL/);
    expect(() => connect("not a url")).toThrow(StoreOpenError);
    expect(() => connect("postgres://me:secret@localhost/berth?target_session_attrs=read-write")).toThrow(
      /^store URL postgres:\/\/me:\*\*\*@localhost\/berth\?target_session_attrs=read-write: target_session_attrs .* is not supported/,
    );
    const nowhere = `postgres://me:secret@localhost:5432/berth?host=${encodeURIComponent(`${postgres.cluster.dir}/nowhere`)}`;
    const refused = await PostgresBackend.open(nowhere).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StoreOpenError);
    expect((refused as Error).message).toContain("postgres://me:***@localhost:5432/berth");
    expect((refused as Error).message).not.toContain("secret");
  });
});
