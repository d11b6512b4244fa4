// The fleet writer (src/store/postgres/fleet-writer.ts) on a real PostgreSQL and a real mirror file:
// the seqs a client was told are the seqs stored after a batch failed, a host that lost a session
// relays no answer of it, and the store's health follows what the server and the mirror really do.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/store/postgres/connection.js";
import { openDatabase } from "../../src/store/database.js";
import { StoreWriteError } from "../../src/store/errors.js";
import type { BatchOutcome, WriterStatus } from "../../src/store/journal-writer.js";
import { buildMirror } from "../../src/store/postgres/fleet-mirror.js";
import { FleetWriter } from "../../src/store/postgres/fleet-writer.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import { startThrowawayCluster, type ThrowawayCluster } from "../../src/store/postgres/throwaway-cluster.js";
import type { StoreBackend, UnitOutcome, WriteUnit } from "../../src/store/store-backend.js";
import { Store } from "../../src/store/store.js";
import { updateRow } from "../../src/store/update-row.js";
import { callOp, flatten, type WriteOp } from "../../src/store/write-batch.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { waitUntil } from "../support/process-table.js";

const postgres = usePostgresCluster();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const T0 = Date.UTC(2025, 0, 1);
const event = (seq: number, text: string): WriteOp => ["e", "s", seq, "update", JSON.stringify({ text }), T0 + seq];

/** Host A with session "s" on the database at `url`, its mirror built, and its fleet writer on `backend` (or the real one). */
async function hostA(url: string, wrap: (backend: PostgresBackend) => StoreBackend = (backend) => backend) {
  const backend = await PostgresBackend.open(url, { maxConnections: 2 });
  cleanups.push(() => backend.close());
  await backend.registerHost({ id: "host-a", url: null });
  const lease = await backend.createSession({ id: "s", agent: "demo", cwd: "/w", createdAt: T0 }, "host-a");
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "berth-fleet-writer-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const mirrorPath = join(dir, "fleet-mirror.sqlite");
  await buildMirror(backend, "host-a", mirrorPath, [lease], []);
  const outcomes = new Map<number, BatchOutcome>();
  const statuses: WriterStatus[] = [];
  const lost: string[] = [];
  const writer = new FleetWriter(wrap(backend), "host-a", mirrorPath, [lease], {
    committed: (outcome) => outcomes.set(outcome.batch, outcome),
    status: (status) => statuses.push(status),
    lost: (sessionId) => lost.push(sessionId),
  });
  cleanups.push(async () => void (await writer.close(5_000)));
  /** Writes one batch of units and waits for its outcome. */
  const write = async (...units: WriteOp[][]) => {
    const batch = writer.write(flatten(units));
    await waitUntil(() => outcomes.has(batch), `batch ${batch} was reported`);
    return outcomes.get(batch)!;
  };
  const mirrored = () => {
    const mirror = Store.open(mirrorPath, { busyTimeoutMs: 0 });
    try {
      return mirror.events.read("s").map((e) => [e.seq, (e.payload as { text: string }).text]);
    } finally {
      mirror.close();
    }
  };
  return { backend, lease, mirrorPath, writer, write, outcomes, statuses, lost, mirrored };
}

describe("the fleet writer on PostgreSQL", () => {
  it("tries a batch again while the connection fails under it, in order with the batches behind it, at the seqs the journal gave", async () => {
    const url = await postgres.freshDatabase();
    let failures = 0;
    // The connection fails under the next `failures` tries: nothing of them reaches the server (as the backend reports a connection lost).
    const faulty = (backend: PostgresBackend): StoreBackend =>
      Object.assign(Object.create(backend) as PostgresBackend, {
        write: async (units: readonly WriteUnit[]): Promise<UnitOutcome[]> => {
          if (failures === 0) return backend.write(units);
          failures--;
          return units.map(() => ({ ok: false, error: new StoreWriteError("events.write", "CONNECTION_CLOSED", "write CONNECTION_CLOSED") }));
        },
      });
    const a = await hostA(url, faulty);
    expect((await a.write([event(1, "m1")])).failed).toEqual([]);
    failures = 3;
    const second = a.writer.write(flatten([[event(2, "m2")]]));
    const third = a.writer.write(flatten([[event(3, "m3")]]));
    await waitUntil(() => a.outcomes.has(third), "the batch behind the retried one was reported");
    expect([a.outcomes.get(second)!.failed, a.outcomes.get(third)!.failed]).toEqual([[], []]);
    expect(a.statuses.map((status) => status.state)).toEqual(["blocked", "writable"]);
    const stored = (await a.backend.readEvents("s")).map((e) => [e.seq, (e.payload as { text: string }).text]);
    expect(stored).toEqual([
      [1, "m1"],
      [2, "m2"],
      [3, "m3"],
    ]);
    expect(a.mirrored()).toEqual(stored);
  }, 30_000);

  it("stores a batch whose commit reached the server but whose reply was lost once: tried again, it is taken as stored", async () => {
    const url = await postgres.freshDatabase();
    let loseReplies = 0;
    let resolutionsLost = 0;
    let creationsLost = 0;
    let creationsCut = false;
    // The server commits, then the connection fails before its reply arrives (what a server stopped right after COMMIT does).
    const lossy = (backend: PostgresBackend): StoreBackend =>
      Object.assign(Object.create(backend) as PostgresBackend, {
        write: async (units: readonly WriteUnit[]): Promise<UnitOutcome[]> => {
          const outcomes = await backend.write(units);
          if (loseReplies === 0) return outcomes;
          loseReplies--;
          return units.map(() => ({ ok: false, error: new StoreWriteError("events.write", "CONNECTION_CLOSED", "write CONNECTION_CLOSED") }));
        },
        createSession: async (...args: Parameters<PostgresBackend["createSession"]>) => {
          // The connection fails before the server has it.
          if (creationsCut) throw new StoreWriteError("sessions.create", "CONNECTION_CLOSED", "write CONNECTION_CLOSED");
          const lease = await backend.createSession(...args);
          if (creationsLost === 0) return lease;
          creationsLost--;
          throw new StoreWriteError("sessions.create", "CONNECTION_CLOSED", "write CONNECTION_CLOSED");
        },
        resolveQuestion: async (...args: Parameters<PostgresBackend["resolveQuestion"]>) => {
          const outcome = await backend.resolveQuestion(...args);
          if (resolutionsLost === 0) return outcome;
          resolutionsLost--;
          throw new StoreWriteError("questions.resolve", "CONNECTION_CLOSED", "write CONNECTION_CLOSED");
        },
      });
    const a = await hostA(url, lossy);
    loseReplies = 2;
    const asked: WriteOp = ["q", "q1", "s", "permission", JSON.stringify({ options: [{ optionId: "allow" }] }), T0];
    expect((await a.write([event(1, "m1")], [["e", "s", 2, "question_asked", '{"questionId":"q1"}', T0 + 2], asked])).failed).toEqual([]);
    // Answered: its commit's reply lost too; the retry finds the question resolved as it tried, and reports it won.
    resolutionsLost = 1;
    const answer = { outcome: { outcome: "selected", optionId: "allow" } };
    const resolved: WriteOp = ["e", "s", 3, "question_resolved", JSON.stringify({ questionId: "q1", state: "answered", answer }), T0 + 3];
    expect((await a.write([resolved, callOp("questions.resolve", ["q1", "answered", answer, T0 + 3])])).failed).toEqual([]);
    expect(resolutionsLost).toBe(0);
    expect((await a.write([event(4, "m4")])).failed).toEqual([]);
    const stored = await a.backend.readEvents("s");
    expect(stored.map((e) => [e.seq, e.kind])).toEqual([
      [1, "update"],
      [2, "question_asked"],
      [3, "question_resolved"],
      [4, "update"],
    ]);
    expect(await a.backend.getQuestion("q1")).toMatchObject({ state: "answered", answer });
    expect(a.mirrored().map(([seq]) => seq)).toEqual([1, 2, 3, 4]);
    // A session created, its reply lost: the retry finds it as it asked, this host's, and writes on under its lease.
    creationsLost = 1;
    expect((await a.write([callOp("sessions.create", [{ id: "t", agent: "demo", cwd: "/w", createdAt: T0 }])])).failed).toEqual([]);
    expect(creationsLost).toBe(0);
    expect((await a.write([["e", "t", 1, "update", JSON.stringify({ text: "t1" }), T0]])).failed).toEqual([]);
    expect((await a.backend.readEvents("t")).map((e) => e.payload)).toEqual([{ text: "t1" }]);
    // While a creation is tried again the store may hold it already: the session counts as this host's meanwhile (a
    // heartbeat must not release it as one this host does not run).
    creationsCut = true;
    const creation = a.writer.write(flatten([[callOp("sessions.create", [{ id: "u", agent: "demo", cwd: "/w", createdAt: T0 }])]]));
    await waitUntil(() => a.statuses.at(-1)?.state === "blocked", "the creation failed for want of the server");
    expect(a.writer.writes("u")).toBe(true);
    creationsCut = false;
    await waitUntil(() => a.outcomes.has(creation), "the creation was reported");
    expect(a.outcomes.get(creation)!.failed).toEqual([]);
    expect(a.writer.writes("u")).toBe(true);
  }, 30_000);

  it("stores an agent's update row (sliced by the journal) as given: the same bytes in the shared store and the mirror", async () => {
    const url = await postgres.freshDatabase();
    const a = await hostA(url);
    const update = ` { "content" : { "text" : "say \\"hi\\" }", "type" : "text" }, "sessionUpdate" : "agent_message_chunk" } `;
    const line = `{ "params" : { "_meta" : {"k":[1]}, "update" :${update}, "sessionId" : "agent-1" }, "method" : "session/update", "jsonrpc" : "2.0" }`;
    const row = `{"update":${update.trim()},"_meta":{"k":[1]}}`;
    expect(updateRow(line)).toBe(row);
    expect((await a.write([["e", "s", 1, "update", row, T0 + 1]])).failed).toEqual([]);
    const sql = connect(url);
    cleanups.push(() => sql.end());
    expect((await sql<{ payload: string }[]>`SELECT payload FROM events WHERE session_id = 's'`).map((r) => r.payload)).toEqual([row]);
    const mirror = openDatabase(a.mirrorPath, { readonly: true });
    cleanups.push(() => void mirror.close());
    expect(mirror.prepare("SELECT payload FROM events WHERE session_id = 's'").pluck().all()).toEqual([row]);
    expect((await a.backend.readEvents("s")).map((e) => e.payload)).toEqual([JSON.parse(row)]);
  }, 30_000);

  it("PostgreSQL: the same journal write twice stores it once; a seq or question stored with other content is refused loudly", async () => {
    const url = await postgres.freshDatabase();
    const backend = await PostgresBackend.open(url, { maxConnections: 2 });
    cleanups.push(() => backend.close());
    await backend.registerHost({ id: "host-a", url: null });
    const lease = await backend.createSession({ id: "s", agent: "demo", cwd: "/w", createdAt: T0 }, "host-a");
    const unit: WriteUnit = {
      lease,
      events: [
        { seq: 1, kind: "update", text: '{"text":"one"}', at: T0 + 1 },
        { seq: 2, kind: "question_asked", text: '{"questionId":"q1"}', at: T0 + 2 },
      ],
      question: { id: "q1", kind: "permission", request: { options: [] }, askedAt: T0 + 2 },
    };
    for (let i = 0; i < 2; i++) expect(await backend.write([unit])).toEqual([{ ok: true, seqs: [1, 2] }]);
    expect((await backend.readEvents("s")).map((e) => e.seq)).toEqual([1, 2]);
    expect((await backend.listQuestions("s")).map((q) => q.id)).toEqual(["q1"]);
    // Another payload at seq 1, another question under q1's id: each refused, the unit beside them stored.
    const [payload, question, beside] = await backend.write([
      { lease, events: [{ seq: 1, kind: "update", text: '{"text":"not one"}', at: T0 + 1 }] },
      {
        lease,
        events: [{ seq: 3, kind: "question_asked", text: '{"questionId":"q1"}', at: T0 + 3 }],
        question: { ...unit.question!, askedAt: T0 + 3 },
      },
      { lease, events: [{ seq: 4, kind: "update", text: '{"text":"four"}', at: T0 + 4 }] },
    ]);
    expect(payload).toMatchObject({ ok: false, error: { code: "23505", message: expect.stringMatching(/already stored with other content/) } });
    expect(question).toMatchObject({ ok: false, error: { code: "23505" } });
    expect(beside).toEqual({ ok: true, seqs: [4] });
    const texts = (await backend.readEvents("s")).map((e) => [e.seq, e.payload]);
    expect(texts).toEqual([
      [1, { text: "one" }],
      [2, { questionId: "q1" }],
      [4, { text: "four" }],
    ]);
  }, 30_000);

  it("relays no answer for a session it lost: a person's answer goes under the lease too, and a stale one is refused", async () => {
    const url = await postgres.freshDatabase();
    const a = await hostA(url);
    expect((await a.write([event(1, "hello"), ["q", "q1", "s", "permission", "{}", T0]])).failed).toEqual([]);
    // A later process registers under host A's id: the writer's lease of "s" is stale.
    const later = await PostgresBackend.open(url, { maxConnections: 1 });
    cleanups.push(() => later.close());
    await later.registerHost({ id: "host-a", url: null });
    const answer = { optionId: "allow" };
    const resolved: WriteOp = ["e", "s", 2, "question_resolved", JSON.stringify({ questionId: "q1", state: "answered", answer }), T0 + 5];
    const outcome = await a.write([resolved, callOp("questions.resolve", ["q1", "answered", answer, T0 + 5])]);
    expect(outcome.failed).toEqual([expect.objectContaining({ unit: 0, lost: true, error: expect.stringMatching(/epoch 1 is stale/) })]);
    expect(a.lost).toEqual(["s"]);
    expect(await later.getQuestion("q1")).toMatchObject({ state: "pending", answer: null });
    expect((await later.readEvents("s")).map((e) => e.kind)).toEqual(["update"]);
  }, 30_000);

  it("a session whose creation failed: its writes fail as not stored, never as refused because another host owns it", async () => {
    const url = await postgres.freshDatabase();
    const a = await hostA(url);
    // The database refuses the creation (the id is taken), so no lease of "t" exists, here or anywhere.
    const session = { id: "t", agent: "demo", cwd: "/w", createdAt: T0 };
    await a.backend.createSession(session, "host-a");
    const outcome = await a.write([callOp("sessions.create", [session])], [["e", "t", 1, "update", JSON.stringify({ text: "hi" }), T0]]);
    expect(outcome.failed).toEqual([
      { unit: 0, error: expect.stringMatching(/duplicate key|already exists/) },
      { unit: 1, error: 'session "t" was not stored: its creation failed in the shared store' },
    ]);
  }, 30_000);

  it("while the server is gone (its socket too): the store degraded once, batches wait in order and are stored once it is back", async () => {
    const cluster: ThrowawayCluster = await startThrowawayCluster({ unsafeFast: true });
    cleanups.push(() => cluster.stop());
    const a = await hostA(cluster.url);
    expect((await a.write([event(1, "before")])).failed).toEqual([]);
    await cluster.halt();
    const during = [2, 3, 4].map((seq) => a.writer.write(flatten([[event(seq, `during ${seq}`)]])));
    await waitUntil(() => a.statuses.length > 0, "the store's health says it cannot write");
    expect(a.statuses).toEqual([expect.objectContaining({ state: "blocked" })]);
    expect(during.filter((batch) => a.outcomes.has(batch))).toEqual([]);
    expect(a.mirrored()).toEqual([[1, "before"]]);
    await cluster.start();
    await waitUntil(() => during.every((batch) => a.outcomes.has(batch)), "the waiting batches were reported");
    expect(during.map((batch) => a.outcomes.get(batch)!.failed)).toEqual([[], [], []]);
    expect(a.statuses.map((status) => status.state)).toEqual(["blocked", "writable"]);
    expect(a.mirrored()).toEqual([
      [1, "before"],
      [2, "during 2"],
      [3, "during 3"],
      [4, "during 4"],
    ]);
  }, 60_000);

  it("reports what waits on a server that is gone failed when the host stops: nothing of it is reported stored", async () => {
    const cluster: ThrowawayCluster = await startThrowawayCluster({ unsafeFast: true });
    cleanups.push(() => cluster.stop());
    const a = await hostA(cluster.url);
    await cluster.halt();
    const batches = [1, 2].map((seq) => a.writer.write(flatten([[event(seq, `during ${seq}`)]])));
    await waitUntil(() => a.statuses.length > 0, "the store's health says it cannot write");
    expect(await a.writer.close(200)).toBe(2);
    expect(batches.map((batch) => a.outcomes.get(batch)!.failed)).toEqual([
      [expect.objectContaining({ error: expect.stringMatching(/ECONNREFUSED|ENOENT|CONNECT/) })],
      [expect.objectContaining({ unit: -1, error: expect.stringMatching(/host stopped/) })],
    ]);
  }, 60_000);

  it("reports the store degraded while its mirror cannot write, and writable once it can; nothing is reported stored meanwhile", async () => {
    const url = await postgres.freshDatabase();
    const a = await hostA(url);
    // Another connection holds the mirror's write lock.
    const other = openDatabase(a.mirrorPath);
    cleanups.push(() => void other.close());
    other.exec("BEGIN IMMEDIATE");
    const batch = a.writer.write(flatten([[event(1, "waits")]]));
    await waitUntil(() => a.statuses.length > 0, "the mirror's blocked status reached the store's health");
    expect(a.statuses).toEqual([expect.objectContaining({ state: "blocked", code: "SQLITE_BUSY" })]);
    expect(a.outcomes.has(batch)).toBe(false);
    other.exec("COMMIT");
    await waitUntil(() => a.statuses.length > 1, "the mirror writes again");
    expect(a.statuses[1]).toMatchObject({ state: "writable" });
    await waitUntil(() => a.outcomes.has(batch), "the waiting batch was reported");
    expect(a.outcomes.get(batch)!.failed).toEqual([]);
    expect((await a.write([event(2, "after")])).failed).toEqual([]);
    expect(a.mirrored()).toEqual([
      [1, "waits"],
      [2, "after"],
    ]);
  }, 30_000);

  it("adopts a session: its journal and questions copied into the mirror whole, then written under the new lease; a failed copy leaves nothing", async () => {
    const url = await postgres.freshDatabase();
    const a = await hostA(url);
    // Host B's session with a journal and two questions (one answered), then let go (as a dead host's would be taken).
    const b = await PostgresBackend.open(url, { maxConnections: 1 });
    cleanups.push(() => b.close());
    await b.registerHost({ id: "host-b", url: null });
    const old = await b.createSession({ id: "t", agent: "demo", cwd: "/w", createdAt: T0 }, "host-b");
    await b.updateSession(old, { agentSessionId: "agent-t", title: "from B" });
    const question = (id: string): WriteUnit => ({
      lease: old,
      events: [{ kind: "question_asked", payload: { questionId: id }, at: T0 }],
      question: { id, kind: "permission", request: { options: [{ optionId: "allow" }] }, askedAt: T0 },
    });
    const said = { lease: old, events: [1, 2].map((n) => ({ kind: "update", payload: { text: `b${n}` }, at: T0 + n })) };
    expect((await b.write([said, question("q1"), question("q2")])).every((outcome) => outcome.ok)).toBe(true);
    await b.resolveQuestion({ questionId: "q2", state: "answered", answer: { optionId: "allow" }, at: T0 + 5 }, old);
    await b.giveUpLease(old);
    const lease = await a.backend.acquireLease("t", "host-a");
    expect(lease).toEqual({ sessionId: "t", hostId: "host-a", epoch: 3 });

    await a.writer.adopt(lease, (await a.backend.getSession("t"))!);
    const mirror = Store.open(a.mirrorPath, { busyTimeoutMs: 0 });
    cleanups.push(() => void mirror.close());
    expect(mirror.sessions.get("t")).toMatchObject({ agentSessionId: "agent-t", title: "from B" });
    expect(mirror.events.read("t")).toEqual(await a.backend.readEvents("t"));
    expect(mirror.events.lastSeq("t")).toBe(5);
    expect(mirror.questions.listPending("t").map((q) => q.id)).toEqual(["q1"]);
    expect(mirror.questions.get("q2")).toMatchObject({ state: "answered" });
    // Numbered on after the last seq, under the new lease.
    expect((await a.write([["e", "t", 6, "update", JSON.stringify({ text: "a6" }), T0 + 6]])).failed).toEqual([]);
    expect((await a.backend.readEvents("t")).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(mirror.events.lastSeq("t")).toBe(6);

    // A copy that fails (the session is not in the shared store) leaves nothing in the mirror, and no lease to write under.
    const ghost = { ...(await a.backend.getSession("t"))!, id: "ghost" };
    await expect(a.writer.adopt({ sessionId: "ghost", hostId: "host-a", epoch: 1 }, ghost)).rejects.toThrow(/ghost/);
    expect(mirror.sessions.get("ghost")).toBeUndefined();
    expect((await a.write([["e", "ghost", 1, "update", "{}", T0]])).failed).toEqual([
      expect.objectContaining({ error: expect.stringMatching(/not owned by this host/), lost: true }),
    ]);
  }, 30_000);
});
