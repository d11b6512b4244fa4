// A real `berth serve --store postgres://…` on a real (throwaway) PostgreSQL: a session created
// and prompted through ACP is in the shared database, and after a restart (even on an empty data
// directory) the session, its journal and the lifecycle records come back from there.
import { existsSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/store/events.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import { Store } from "../../src/store/store.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { waitUntil } from "../support/process-table.js";
import { AcpClient, errorLines, eventually, FleetTestBed, getJson, sleepingTurn, stopHost } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
afterEach(() => bed.cleanup());

type Events = { events: JournalEvent[] };
type Records = { records: Array<{ id: number; record: { kind: string; sessionId?: string } }> };

describe("berth serve on PostgreSQL", () => {
  it("keeps sessions, journals and records in the shared database: a restart, on a new data directory too, finds them all", async () => {
    const url = await postgres.freshDatabase();
    const dataDir = bed.tempDir("berth-fleet-a-");
    const workDir = bed.tempDir("berth-fleet-work-");

    const first = await bed.serve(url, "host-a", dataDir);
    await expect
      .poll(() => first.server.logLines())
      .toContainEqual(
        expect.objectContaining({ hostId: "host-a", incarnation: 1, store: "postgres", msg: expect.stringMatching(/^registered in the fleet/) }),
      );
    const acp = new AcpClient(first.acpUrl, first.token);
    await acp.initialize();
    const sessionId = await acp.newSession(workDir);
    expect((await acp.prompt(sessionId, "hello from the fleet")).stopReason).toBe("end_turn");
    expect(acp.texts.get(sessionId)).toContain("hello from the fleet");
    acp.close();
    const before = (await getJson<Events>(first.url, first.token, `/api/sessions/${sessionId}/events`)).body.events;
    expect(before.map((event) => event.seq)).toEqual(before.map((_, i) => i + 1));
    expect(before.map((event) => event.kind)).toEqual(expect.arrayContaining(["turn_started", "update", "turn_ended"]));

    // What the host showed is what the shared database holds, seq for seq.
    const shared = await PostgresBackend.open(url, { maxConnections: 1 });
    try {
      expect(await shared.readEvents(sessionId)).toEqual(before);
      expect(await shared.getLease(sessionId)).toEqual({ sessionId, hostId: "host-a", epoch: 1 });
      expect((await shared.recentRecords(100)).map((record) => record.kind)).toContain("child_acquired");
    } finally {
      await shared.close();
    }
    // The embedded store of the data directory was never written: the host read its mirror.
    const embedded = Store.open(join(dataDir, "berth.sqlite"));
    expect(embedded.sessions.list()).toEqual([]);
    embedded.close();
    expect(existsSync(join(dataDir, "fleet-mirror.sqlite"))).toBe(true);
    // Made anew at each start, 0600 like every file of the data directory, whatever the umask (022 here).
    for (const file of ["fleet-mirror.sqlite", "fleet-mirror.sqlite-wal", "fleet-mirror.sqlite-shm"])
      expect({ file, mode: (statSync(join(dataDir, file)).mode & 0o777).toString(8) }).toEqual({ file, mode: "600" });
    await stopHost(first.server);
    expect(errorLines(first.server)).toEqual([]);

    // The same host id on an empty data directory: everything comes from the shared database.
    const elsewhere = await bed.serve(url, "host-a", bed.tempDir("berth-fleet-a2-"));
    await expect.poll(() => elsewhere.server.logLines()).toContainEqual(expect.objectContaining({ incarnation: 2, sessions: 1 }));
    const listed = (await getJson<{ sessions: Array<{ id: string; title: string | null }> }>(elsewhere.url, elsewhere.token, "/api/sessions")).body;
    expect(listed.sessions.map((session) => session.id)).toEqual([sessionId]);
    expect((await getJson<Events>(elsewhere.url, elsewhere.token, `/api/sessions/${sessionId}/events`)).body.events).toEqual(before);
    const records = (await getJson<Records>(elsewhere.url, elsewhere.token, "/api/records?limit=1000")).body.records;
    expect(records.filter((r) => r.record.sessionId === sessionId).map((r) => r.record.kind)).toEqual(
      expect.arrayContaining(["child_acquired", "turn_started", "turn_ended"]),
    );
    await stopHost(elsewhere.server);
    expect(errorLines(elsewhere.server)).toEqual([]);

    // Back on its own data directory (where its agent keeps its conversation): the session goes on, numbered after the last seq.
    const again = await bed.serve(url, "host-a", dataDir);
    const resumed = new AcpClient(again.acpUrl, again.token);
    await resumed.initialize();
    await resumed.resume(sessionId, workDir);
    expect((await resumed.prompt(sessionId, "and after the restart?")).stopReason).toBe("end_turn");
    expect(resumed.texts.get(sessionId)).toContain("and after the restart?");
    resumed.close();
    const after = (await getJson<Events>(again.url, again.token, `/api/sessions/${sessionId}/events`)).body.events;
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.map((event) => event.seq)).toEqual(after.map((_, i) => i + 1));
    expect(after.length).toBeGreaterThan(before.length);
    const check = await PostgresBackend.open(url, { maxConnections: 1 });
    try {
      expect(await check.readEvents(sessionId)).toEqual(after);
      expect((await check.getLease(sessionId))?.epoch).toBe(3);
    } finally {
      await check.close();
    }
    await stopHost(again.server);
    expect(errorLines(again.server)).toEqual([]);
  }, 120_000);

  it("a store setting that is not PostgreSQL's is a usage error; a database that is not there stops the start, its password hidden", async () => {
    const dataDir = bed.tempDir("berth-fleet-bad-");
    const wrong = bed.spawn(["serve", "--port", "0", "--data-dir", dataDir, "--store", "mysql://me:secret@localhost/berth"], {
      XDG_CONFIG_HOME: dataDir,
    });
    expect((await wrong.exited).code).toBe(2);
    expect(wrong.stderr).toContain('--store: expected "sqlite" or a postgres:// URL, got "mysql://me:***@localhost/berth"');
    const nowhere = `postgres://me@localhost/berth?host=${encodeURIComponent(join(dataDir, "no-socket-here"))}`;
    const absent = bed.spawn(["serve", "--port", "0", "--data-dir", dataDir, "--store", nowhere], {
      XDG_CONFIG_HOME: dataDir,
      PGPASSWORD: "secret",
    });
    expect((await absent.exited).code).toBe(1);
    expect(absent.stderr).toMatch(/berth serve: cannot open the PostgreSQL store postgres:\/\/me@localhost\/berth/);
    expect(wrong.stderr + absent.stderr).not.toContain("secret");
  }, 60_000);

  it("a second host on the machine under the default host id is refused while the first heartbeats, naming --host-id", async () => {
    const url = await postgres.freshDatabase();
    /** `berth serve` with no --host-id (this machine's name), on a data directory of its own. */
    const serveUnderDefaultId = (name: string) => {
      const dataDir = bed.tempDir(`berth-fleet-default-id-${name}-`);
      const configFile = join(dataDir, "config.json");
      writeFileSync(configFile, JSON.stringify({ fleet: { heartbeatInterval: "250ms", hostTtl: "6s" } }));
      return bed.spawn(["serve", "--port", "0", "--data-dir", dataDir, "--config", configFile, "--store", url], { XDG_CONFIG_HOME: dataDir });
    };
    const first = serveUnderDefaultId("first");
    await first.startupLine();
    const second = serveUnderDefaultId("second");
    const started = second.startupLine().then(
      () => "started",
      () => "exited",
    );
    expect(await Promise.race([second.exited.then(({ code }) => code), started])).toBe(1);
    expect(second.stderr).toContain(`runs under the host id "${hostname()}" (this machine's name, the default) and heartbeats`);
    expect(second.stderr).toContain("--host-id");
    // The first one was left alone: it still writes as the id's only process.
    expect(first.logLines().some((line) => /a later process registered under this host id/.test(String(line.msg)))).toBe(false);
    await stopHost(first);
    // Stopped, its heartbeat ages past its TTL: a host under the default id starts again.
    const third = serveUnderDefaultId("third");
    await third.startupLine();
    await expect
      .poll(() => third.logLines())
      .toContainEqual(expect.objectContaining({ hostId: hostname(), incarnation: 2, msg: expect.stringMatching(/^registered in the fleet/) }));
    await stopHost(third);
  }, 60_000);

  it("a host killed with a question pending: restarted under its id, it orphans the question in the shared database, with its events", async () => {
    const url = await postgres.freshDatabase();
    const dataDir = bed.tempDir("berth-fleet-kill-");
    const workDir = bed.tempDir("berth-fleet-kill-work-");
    const first = await bed.serve(url, "host-a", dataDir);
    const acp = new AcpClient(first.acpUrl, first.token);
    await acp.initialize();
    const sessionId = await acp.newSession(workDir);
    void acp.prompt(sessionId, "/ask May I?").catch(() => undefined);
    await waitUntil(() => acp.asked.length > 0, "the agent asked");
    const shared = await PostgresBackend.open(url, { maxConnections: 1 });
    try {
      const [question] = await shared.listPendingQuestions(sessionId);
      expect(question).toMatchObject({ sessionId, kind: "permission", state: "pending" });
      first.server.signal("SIGKILL");
      await first.server.exited;
      acp.close();

      const again = await bed.serve(url, "host-a", dataDir);
      expect(await shared.getQuestion(question!.id)).toMatchObject({ state: "orphaned", reason: expect.stringMatching(/host restarted/) });
      expect((await getJson<{ questions: unknown[] }>(again.url, again.token, "/api/questions")).body.questions).toEqual([]);
      const events = await shared.readEvents(sessionId);
      expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
      const resolved = events.findIndex((event) => event.kind === "question_resolved");
      expect(events[resolved]?.payload).toMatchObject({ questionId: question!.id, state: "orphaned" });
      expect(events.slice(resolved + 1).map((event) => event.kind)).toEqual(["turn_ended", "update"]);
      expect((await getJson<Events>(again.url, again.token, `/api/sessions/${sessionId}/events`)).body.events).toEqual(events);
      await stopHost(again.server);
      expect(errorLines(again.server)).toEqual([]);
    } finally {
      await shared.close();
    }
  }, 90_000);

  it("a host killed in the middle of a turn with no question: restarted under its id, it ends the turn with a notice", async () => {
    const url = await postgres.freshDatabase();
    const dataDir = bed.tempDir("berth-fleet-turn-");
    const first = await bed.serve(url, "host-a", dataDir);
    const { acp, sessionId } = await sleepingTurn(first, bed.tempDir("berth-fleet-turn-work-"), "30s");
    first.server.signal("SIGKILL");
    await first.server.exited;
    acp.close();

    // An adopter that crashed after taking the lease and before ending the dead owner's turn leaves the same journal.
    const again = await bed.serve(url, "host-a", dataDir);
    const shared = await PostgresBackend.open(url, { maxConnections: 1 });
    try {
      await eventually(async () => (await shared.readEvents(sessionId)).at(-1)?.kind === "update", "the restarted host ended the turn");
      const events = await shared.readEvents(sessionId);
      expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
      const started = events.findIndex((event) => event.kind === "turn_started");
      const ended = events.findIndex((event) => event.kind === "turn_ended");
      expect(ended).toBeGreaterThan(started);
      expect(events[ended]?.payload).toEqual({ stopReason: null, error: "the host stopped during the turn" });
      expect(events.at(-1)?.payload).toMatchObject({ update: { _meta: { "berth/notice": { kind: "turn_abandoned" } } } });
      expect(again.server.logLines().some((line) => line.msg === "turns the previous run left open ended after restart")).toBe(true);
      await stopHost(again.server);
      expect(errorLines(again.server)).toEqual([]);
    } finally {
      await shared.close();
    }
  }, 90_000);
});
