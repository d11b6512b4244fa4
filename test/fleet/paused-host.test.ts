// The paused host (docs/fleet.md): a real `berth serve` on PostgreSQL is stopped with SIGSTOP
// in the middle of a turn, past its lease; another host takes the session; SIGCONT: the paused
// host's writes are refused, it stops the agent of the session it lost, and the journal holds
// nothing twice and nothing of the paused host after the takeover.
import { afterEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/store/events.js";
import { connect } from "../../src/store/postgres/connection.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import { processIsRunning, waitUntil } from "../support/process-table.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { AcpClient, errorLines, eventually, FleetTestBed, gaveUp, getJson, refusedWrites, sleepingTurn, stopHost } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
const opened: PostgresBackend[] = [];
afterEach(async () => {
  for (const backend of opened.splice(0)) await backend.close();
  await bed.cleanup();
});

const HOST_TTL = 2_000;
const fleetConfig = { fleet: { heartbeatInterval: "250ms", hostTtl: `${HOST_TTL}ms` } };
const textOf = (event: JournalEvent) => (event.payload as { update?: { content?: { text?: string } } }).update?.content?.text ?? "";

describe("a host paused past its lease (SIGSTOP, then SIGCONT)", () => {
  it("can write nothing more of the session another host took, stops its agent, and the journal holds nothing twice", async () => {
    const url = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-paused-work-");
    const a = await bed.serve(url, "host-a", bed.tempDir("berth-paused-a-"), fleetConfig);
    // Host B is there first: between the agent's first words and host A's stop nothing else is done.
    const b = await PostgresBackend.open(url, { hostTtlMs: HOST_TTL, maxConnections: 2 });
    opened.push(b);
    await b.registerHost({ id: "host-b", url: null });
    // A turn under way: the agent has said it sleeps, and will say more after a second, while host A is
    // stopped (host A is offline only a TTL after its last heartbeat): what it says then waits in the pipe.
    const { acp, sessionId, turn, agentPid } = await sleepingTurn(a, workDir, "1s");
    a.server.signal("SIGSTOP");
    try {
      // Host A's heartbeat ages past the TTL on the server's clock.
      await eventually(async () => (await b.listHosts()).some((host) => host.id === "host-a" && !host.alive), "host A is offline");
      // Host B takes the session (as a host adopting it would) and writes on.
      const lease = await b.acquireLease(sessionId, "host-b");
      expect(lease).toEqual({ sessionId, hostId: "host-b", epoch: 2 });
      const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "host B took over" } };
      const [outcome] = await b.write([{ lease, events: [{ kind: "update", payload: { update }, at: Date.now() }] }]);
      expect(outcome?.ok).toBe(true);
    } finally {
      a.server.signal("SIGCONT");
    }

    // Host A wakes: its heartbeat (or its first refused write) tells it the session is gone; it stops the agent.
    await gaveUp(a.server, sessionId, agentPid);
    // One view: host A shows it still, as host B's (read from the shared store), no longer as its own.
    await eventually(
      async () => (await getJson<{ host?: string }>(a.url, a.token, `/api/sessions/${sessionId}`)).body.host === "host-b",
      "host A shows the session as host B's",
    );
    // The agent's sleep had ended while host A was stopped: its answer was in the pipe, and the turn
    // ended; its end was refused (the session is B's), so the client gets no stop reason for it.
    expect(await turn).toMatchObject({ data: { code: "turn_not_stored" } });
    acp.close();
    // What the agent said while host A was stopped reached host A, and was refused.
    await refusedWrites(a.server, sessionId);

    const events = await b.readEvents(sessionId);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    const takeover = events.findIndex((event) => textOf(event) === "host B took over");
    // Nothing of host A after the takeover, and nothing of it twice.
    expect(events.slice(takeover + 1)).toEqual([]);
    expect(events.filter((event) => textOf(event).startsWith("Sleeping for"))).toHaveLength(1);
    expect(events.filter((event) => event.kind === "turn_started")).toHaveLength(1);
    expect(await b.getLease(sessionId)).toEqual({ sessionId, hostId: "host-b", epoch: 2 });

    // Host A is well otherwise: it heartbeats again, and stops cleanly.
    await eventually(async () => (await b.listHosts()).some((host) => host.id === "host-a" && host.alive), "host A heartbeats again");
    await stopHost(a.server);
    // Woken past the TTL, host A sends a heartbeat before it judges the deadline: it lost the session because host B
    // holds it (its heartbeat's leases, or its refused write, said so), and gave up everything only if a heartbeat
    // caught in flight by SIGSTOP counted as hung.
    expect(errorLines(a.server).filter((line) => !/^no heartbeat reached the shared store/.test(String(line.msg)))).toEqual([]);
  }, 90_000);

  it("a host whose heartbeats hang fences itself within the TTL: it stops the agent, and the session is refused at once", async () => {
    const url = await postgres.freshDatabase();
    const a = await bed.serve(url, "host-a", bed.tempDir("berth-hung-a-"), fleetConfig);
    const workDir = bed.tempDir("berth-hung-work-");
    const { acp, sessionId, turn, agentPid } = await sleepingTurn(a, workDir, "30s");
    const admin = connect(url, { max: 1 });
    try {
      await admin.begin(async (tx) => {
        // The database hangs for host A: its heartbeat waits on its host row, its writes of the session on the session's.
        await tx`SELECT 1 FROM hosts WHERE id = 'host-a' FOR UPDATE`;
        await tx`SELECT 1 FROM sessions WHERE id = ${sessionId} FOR UPDATE`;
        const renamed = await fetch(`${a.url}/api/sessions/${sessionId}`, {
          method: "PATCH",
          headers: { authorization: `Bearer ${a.token}`, "content-type": "application/json" },
          body: JSON.stringify({ title: "queued behind the hung database" }),
        });
        expect(renamed.status).toBe(200);
        await waitUntil(() => !processIsRunning(agentPid), "host A stopped the agent of the session it could no longer hold", 15_000);
        // The host's log is written apart from what it does: waited for, then checked whole.
        await waitUntil(
          () => errorLines(a.server).some((line) => /^no heartbeat reached the shared store within the host TTL/.test(String(line.msg))),
          "host A logged that it fenced itself",
        );
        expect(errorLines(a.server)).toEqual([
          expect.objectContaining({
            hostId: "host-a",
            sessions: 1,
            msg: expect.stringMatching(/^no heartbeat reached the shared store within the host TTL/),
          }),
        ]);
        // Still in the mirror (its removal waits behind the hung write), yet no longer this host's own: not found, or (once
        // A's directory read the store again, its lease still naming A) listed as no host's; no agent is started for it.
        const view = await getJson<{ host?: string | null }>(a.url, a.token, `/api/sessions/${sessionId}`);
        expect(view.status === 404 || view.body.host === null, JSON.stringify(view)).toBe(true);
        const listed = (await getJson<{ sessions: Array<{ host: string | null }> }>(a.url, a.token, "/api/sessions")).body.sessions;
        expect(listed.filter((session) => session.host !== null)).toEqual([]);
        await expect(acp.prompt(sessionId, "are you there?")).rejects.toThrow(/not found|no owner host|read-only/i);
        expect(a.server.logLines().filter((line) => line.kind === "child_acquired" && line.sessionId === sessionId)).toHaveLength(1);
      });
    } finally {
      await admin.end();
    }
    // Its end was refused by the store like the rest (the session is no longer A's): never a stop reason for it.
    const ended = (await turn) as { stopReason?: string; data?: { code?: string } };
    expect(["agent_failed", "turn_not_stored"]).toContain(ended.stopReason ?? ended.data?.code);
    acp.close();
    await waitUntil(
      () => a.server.logLines().some((line) => line.kind === "session_lost" && line.sessionId === sessionId && line.owner === null),
      "host A recorded the loss",
    );
    // Heartbeats get through again: A takes back the session it gave up (its lease still named A), at a new epoch, with
    // fleet.adopt off (the default), instead of leaving it no host's, read-only on every host for good.
    const sql = connect(url, { max: 1 });
    try {
      await eventually(async () => {
        const [row] = await sql<{ owner_host: string | null; epoch: number }[]>`SELECT owner_host, epoch FROM sessions WHERE id = ${sessionId}`;
        return row!.owner_host === "host-a" && row!.epoch > 1;
      }, "host A took back the lease of the session it gave up");
    } finally {
      await sql.end();
    }
    await eventually(
      async () => (await getJson<{ host: string | null }>(a.url, a.token, `/api/sessions/${sessionId}`)).body.host === "host-a",
      "host A serves the session it took back",
    );
    await expect.poll(() => a.server.logLines()).toContainEqual(expect.objectContaining({ kind: "session_adopted", sessionId, from: "host-a" }));
    // Its own again: opened and prompted on A, its agent started anew.
    const again = new AcpClient(a.acpUrl, a.token);
    try {
      await again.initialize();
      await again.resume(sessionId, workDir);
      expect((await again.prompt(sessionId, "back again")).stopReason).toBe("end_turn");
      expect(again.texts.get(sessionId)).toContain("back again");
    } finally {
      again.close();
    }
    await stopHost(a.server);
  }, 90_000);

  it("a second process under the same host id makes the first one's leases stale: the first stops its agents and writes nothing", async () => {
    const url = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-twice-work-");
    const first = await bed.serve(url, "host-a", bed.tempDir("berth-twice-1-"), fleetConfig);
    const { acp, sessionId, turn, agentPid } = await sleepingTurn(first, workDir, "30s");
    const seen = await PostgresBackend.open(url, { maxConnections: 1 });
    opened.push(seen);
    const lastBefore = await seen.lastSeq(sessionId);

    // The same id starts again elsewhere (a supervisor that thought the first was dead).
    const second = await bed.serve(url, "host-a", bed.tempDir("berth-twice-2-"), fleetConfig);
    await expect.poll(() => second.server.logLines()).toContainEqual(expect.objectContaining({ incarnation: 2, sessions: 1 }));
    await waitUntil(() => !processIsRunning(agentPid), "the first process stopped its agent", 15_000);
    await waitUntil(
      () => first.server.logLines().some((line) => /a later process registered under this host id/.test(String(line.msg))),
      "the first process learned it was superseded",
    );
    // The agent was stopped under the turn: it never ends normally, and its end is refused by the store like the rest
    // (the lease is stale): the client is told it was not stored, or that the agent failed (its connection closing first).
    const ended = (await turn) as { stopReason?: string; data?: { code?: string } };
    expect(["agent_failed", "turn_not_stored"]).toContain(ended.stopReason ?? ended.data?.code);
    acp.close();
    // Whatever the first process's agent said after the second registered was refused; the second ended at its start the
    // turn the first had left open (its agent is gone), with a notice.
    const events = await seen.readEvents(sessionId);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.slice(lastBefore).map((event) => event.kind)).toEqual(["turn_ended", "update"]);
    expect(events.at(-1)?.payload).toMatchObject({ update: { _meta: { "berth/notice": { kind: "turn_abandoned" } } } });
    // The second process owns the session and serves it.
    expect((await getJson<{ id: string }>(second.url, second.token, `/api/sessions/${sessionId}`)).body.id).toBe(sessionId);
    await stopHost(second.server);
    await stopHost(first.server);
  }, 90_000);
});
