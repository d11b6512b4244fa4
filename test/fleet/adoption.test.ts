// Adoption (docs/fleet.md, "Adoption"): real `berth serve --store postgres://…` processes on one throwaway cluster
// and one filesystem. Host A owns a session with some turns and a question pending and is killed (SIGKILL); past the
// TTL hosts B and C (fleet.adopt on) are asked to open it at once: exactly one adopts it, the other answers 409. The
// winner's agent (the demo agent, its conversations in a directory both hosts share) restores its conversation with
// `session/load`; the journal goes on 1, 2, 3… with one copy of each event, the dead owner's question orphaned and its
// turn ended. A session whose directory is gone, and a host with adoption off, answer 409 saying why. A restarted
// under its id shows the session as the winner's and writes nothing of it; a host only paused (SIGSTOP) past its TTL
// whose session was adopted wakes, stores nothing of what its agent said meanwhile, and stops that agent.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { waitUntil } from "../support/process-table.js";
import {
  AcpClient,
  errorLines,
  eventually,
  FleetTestBed,
  gaveUp,
  getJson,
  refusalOf,
  refusedWrites,
  sleepingTurn,
  stopHost,
} from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
afterEach(() => bed.cleanup());

interface View {
  id: string;
  host: string | null;
  hostOnline: boolean;
  preview: { role: string; text: string } | null;
}
type Records = { records: Array<{ record: { kind: string; sessionId?: string; from?: string | null; epoch?: number; events?: number } }> };
type Events = { events: Array<{ seq: number; kind: string; payload: unknown }> };

/** Both hosts run the demo agent on one conversation directory (the shared filesystem) and record what it is sent. */
function hostConfig(url: string, adopt: boolean, stateDir: string, recordFile: string) {
  return {
    fleet: { heartbeatInterval: "250ms", hostTtl: "2000ms", url, adopt },
    agents: { demo: { command: process.execPath, args: [demoAgentMain, "--state-dir", stateDir, "--record", recordFile] } },
  };
}

/** Hosts A and B on a fresh database, their agents sharing one conversation directory. */
async function twoHosts(name: string, adopt: boolean) {
  const url = await postgres.freshDatabase();
  const workDir = bed.tempDir(`berth-${name}-work-`);
  const shared = bed.tempDir(`berth-${name}-shared-`);
  const config = (port: number) => hostConfig(`http://127.0.0.1:${port}`, adopt, join(shared, "conversations"), join(shared, "wire.ndjson"));
  const a = await bed.serve(url, "host-a", bed.tempDir(`berth-${name}-a-`), config(7441));
  const b = await bed.serve(url, "host-b", bed.tempDir(`berth-${name}-b-`), config(7442));
  return { url, workDir, a, b };
}

/** Waits until `host` shows the session with its owner offline. */
function shownOffline(host: { url: string; token: string }, sessionId: string): Promise<void> {
  return eventually(
    async () => (await getJson<View>(host.url, host.token, `/api/sessions/${sessionId}`)).body.hostOnline === false,
    "the session shows its host offline",
  );
}

describe("adoption of an offline host's sessions", () => {
  it("one of two hosts adopts a dead host's session: the agent loads its conversation, the journal goes on without gap or double", async () => {
    const url = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-adopt-work-");
    const goneDir = bed.tempDir("berth-adopt-gone-");
    const shared = bed.tempDir("berth-adopt-shared-");
    const stateDir = join(shared, "conversations");
    const recordFile = join(shared, "agent-wire.ndjson");
    const aDir = bed.tempDir("berth-adopt-a-");
    const config = (port: number, adopt = true) => hostConfig(`http://127.0.0.1:${port}`, adopt, stateDir, recordFile);
    const a = await bed.serve(url, "host-a", aDir, config(7431));
    const b = await bed.serve(url, "host-b", bed.tempDir("berth-adopt-b-"), config(7432));
    const c = await bed.serve(url, "host-c", bed.tempDir("berth-adopt-c-"), config(7433));

    // On A: two turns, then a third that asks a question nobody answers; and a second session elsewhere.
    const onA = new AcpClient(a.acpUrl, a.token);
    await onA.initialize();
    const sessionId = await onA.newSession(workDir);
    expect((await onA.prompt(sessionId, "first words")).stopReason).toBe("end_turn");
    expect((await onA.prompt(sessionId, "second words")).stopReason).toBe("end_turn");
    void onA.prompt(sessionId, "/ask May I?").catch(() => undefined);
    await waitUntil(() => onA.asked.length > 0, "the agent on A asked");
    const elsewhere = await onA.newSession(goneDir);
    const store = await PostgresBackend.open(url, { maxConnections: 1 });
    try {
      const [question] = await store.listPendingQuestions(sessionId);
      expect(question).toMatchObject({ sessionId, state: "pending" });
      const agentSessionId = (await store.getSession(sessionId))!.agentSessionId;
      expect(agentSessionId).toEqual(expect.any(String));
      const before = await store.readEvents(sessionId);

      // A dies. B and C show its sessions offline; the second session's directory disappears meanwhile.
      await bed.killHost(a);
      onA.close();
      rmSync(goneDir, { recursive: true });
      const viewOn = async (host: { url: string; token: string }, id: string) =>
        (await getJson<View>(host.url, host.token, `/api/sessions/${id}`)).body;
      for (const host of [b, c]) await shownOffline(host, sessionId);
      // REST does not adopt: it says that opening the session would.
      const read = await getJson<{ error: string; message: string }>(b.url, b.token, `/api/sessions/${sessionId}/events`);
      expect(read.status).toBe(409);
      expect(read.body.message).toContain(
        "which is offline (no heartbeat within fleet.hostTtl): open it over ACP (session/load or session/resume) on a host where its directory exists",
      );

      // B and C are asked to open it at once, by two clients each: exactly one host adopts it (once: its two clients
      // share the adoption), both clients of the other are told which host runs it.
      const clients = [b, c, b, c].map((host) => new AcpClient(host.acpUrl, host.token));
      await Promise.all(clients.map((client) => client.initialize()));
      const outcomes = await Promise.all(clients.map((client) => refusalOf(client.resume(sessionId, workDir))));
      const winnerIndex = outcomes.indexOf(undefined);
      expect(winnerIndex).toBeGreaterThanOrEqual(0);
      expect(outcomes.map((outcome) => outcome === undefined)).toEqual(winnerIndex === 0 ? [true, false, true, false] : [false, true, false, true]);
      const [winner, loser] = winnerIndex === 0 ? [b, c] : [c, b];
      const winnerId = winnerIndex === 0 ? "host-b" : "host-c";
      for (const refused of outcomes.filter((outcome) => outcome !== undefined)) {
        expect(refused.data?.code).toBe("owned_by_other_host");
        expect(refused.message).toContain(`host "${winnerId}"`);
      }

      // The winner runs it: its agent loads the conversation A's agent kept, and answers the next prompt. Its view read
      // before that turn too, so the one after shows the turn's words, not what the first read kept.
      const client = clients[winnerIndex]!;
      expect((await viewOn(winner, sessionId)).preview?.text).not.toContain("third words");
      expect((await client.prompt(sessionId, "third words")).stopReason).toBe("end_turn");
      expect(client.texts.get(sessionId)).toContain("third words");
      const wire = readFileSync(recordFile, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { direction: string; message: { method?: string; params?: { sessionId?: string } } });
      expect(wire.filter((line) => line.direction === "in" && line.message.method === "session/load")).toEqual([
        expect.objectContaining({ message: expect.objectContaining({ params: expect.objectContaining({ sessionId: agentSessionId }) }) }),
      ]);
      const conversation = JSON.parse(readFileSync(join(stateDir, `${agentSessionId}.json`), "utf8")) as {
        entries: Array<{ kind: string; text?: string }>;
      };
      expect(conversation.entries.filter((entry) => entry.kind === "user_message").map((entry) => entry.text)).toEqual(
        expect.arrayContaining(["first words", "second words", "third words"]),
      );

      // The journal: A's events as they were, then the orphaned question, the ended turn and its notice, then the
      // winner's turn; 1, 2, 3… with one copy of each; the same on the winner's REST API.
      const after = await store.readEvents(sessionId);
      expect(after.map((event) => event.seq)).toEqual(after.map((_, i) => i + 1));
      expect(after.slice(0, before.length)).toEqual(before);
      const added = after.slice(before.length);
      expect(added.slice(0, 3).map((event) => event.kind)).toEqual(["question_resolved", "turn_ended", "update"]);
      expect(added[0]!.payload).toMatchObject({ questionId: question!.id, state: "orphaned", reason: expect.stringMatching(/went offline/) });
      expect(added.filter((event) => event.kind === "turn_started")).toHaveLength(1);
      expect(after.filter((event) => event.kind === "turn_started")).toHaveLength(4);
      expect(after.filter((event) => event.kind === "question_resolved")).toHaveLength(1);
      expect(await store.getQuestion(question!.id)).toMatchObject({ state: "orphaned" });
      expect((await getJson<Events>(winner.url, winner.token, `/api/sessions/${sessionId}/events?limit=10000`)).body.events).toEqual(after);

      // Every host shows it as the winner's, online; the winner's records say where it came from.
      expect(await store.getLease(sessionId)).toEqual({ sessionId, hostId: winnerId, epoch: 2 });
      // Its view on the winner, read from the mirror the adoption filled: the end of the journal it goes on with.
      expect(await viewOn(winner, sessionId)).toMatchObject({
        id: sessionId,
        host: winnerId,
        hostOnline: true,
        pendingQuestions: 0,
        preview: { role: "agent", text: expect.stringContaining("third words") },
        lastTurn: { outcome: "completed" },
      });
      await eventually(async () => (await viewOn(loser, sessionId)).host === winnerId, "the other host shows the winner as the owner");
      const { body: sessions } = await getJson<{ sessions: View[] }>(winner.url, winner.token, "/api/sessions");
      expect(sessions.sessions.filter((view) => view.id === sessionId)).toHaveLength(1);
      // A's agents were killed with A's ledger still listing their groups: the record tells how many may still run.
      expect((await store.listGroups("host-a")).length).toBeGreaterThan(0);
      const { body: records } = await getJson<Records>(winner.url, winner.token, "/api/records?limit=1000");
      expect(records.records.map((r) => r.record).filter((record) => record.kind === "session_adopted")).toEqual([
        {
          kind: "session_adopted",
          sessionId,
          from: "host-a",
          epoch: 2,
          events: before.length,
          fromGroups: (await store.listGroups("host-a")).length,
        },
      ]);

      // The fleet in the winner's metrics: A offline with the session left behind, the adopted one the winner's.
      const metrics = await fetch(`${winner.url}/metrics`, { headers: { authorization: `Bearer ${winner.token}` } }).then((r) => r.text());
      for (const line of [
        'berth_fleet_host_online{host="host-a"} 0',
        `berth_fleet_host_online{host="${winnerId}"} 1`,
        'berth_fleet_host_incarnation{host="host-a"} 1',
        'berth_fleet_sessions{host="host-a",host_online="false"} 1',
        `berth_fleet_sessions{host="${winnerId}",host_online="true"} 1`,
        'berth_fleet_questions_pending{host="host-a"} 0',
        'berth_fleet_sessions_moved_total{direction="adopted"} 1',
        'berth_fleet_sessions_moved_total{direction="lost"} 0',
      ])
        expect(metrics).toContain(line);

      // A session whose directory is not on this host is not adopted: 409, saying so. A REST read looks at no file (a
      // network filesystem may hang): its 409 says where the session may be adopted.
      const goneRead = await getJson<{ error: string; message: string }>(winner.url, winner.token, `/api/sessions/${elsewhere}/events`);
      expect(goneRead.status).toBe(409);
      expect(goneRead.body.message).toContain("on a host where its directory exists");
      expect(goneRead.body.message).not.toContain(goneDir);
      const gone = await refusalOf(client.resume(elsewhere, goneDir));
      expect(gone?.data?.code).toBe("owned_by_other_host");
      expect(gone?.message).toContain(`its directory ${goneDir} does not exist here`);
      expect(await store.getLease(elsewhere)).toEqual({ sessionId: elsewhere, hostId: "host-a", epoch: 1 });

      // A comes back under its id: it shows the session as the winner's, refuses to run it, and wrote nothing of it.
      const back = await bed.serve(url, "host-a", aDir, config(7431));
      await eventually(async () => (await viewOn(back, sessionId)).host === winnerId, "A, restarted, shows the session as the winner's");
      const onBack = new AcpClient(back.acpUrl, back.token);
      await onBack.initialize();
      const refusedOnA = await refusalOf(onBack.resume(sessionId, workDir));
      expect(refusedOnA?.data?.code).toBe("owned_by_other_host");
      expect(refusedOnA?.message).toContain(`host "${winnerId}"`);
      onBack.close();
      expect(await store.readEvents(sessionId)).toEqual(after);
      expect(existsSync(join(aDir, "fleet-mirror.sqlite"))).toBe(true);

      for (const each of clients) each.close();
      for (const host of [back, b, c]) {
        await stopHost(host.server);
        expect(errorLines(host.server)).toEqual([]);
      }
    } finally {
      await store.close();
    }
  }, 150_000);

  it("a host with adoption off answers 409 saying the owner is offline and adoption is off, and takes nothing", async () => {
    const { url, workDir, a, b } = await twoHosts("adopt-off", false);
    const onA = new AcpClient(a.acpUrl, a.token);
    await onA.initialize();
    const sessionId = await onA.newSession(workDir);
    expect((await onA.prompt(sessionId, "hello")).stopReason).toBe("end_turn");
    await bed.killHost(a);
    onA.close();
    await shownOffline(b, sessionId);

    const onB = new AcpClient(b.acpUrl, b.token);
    await onB.initialize();
    const refused = await refusalOf(onB.resume(sessionId, workDir));
    expect(refused?.data?.code).toBe("owned_by_other_host");
    expect(refused?.message).toContain('owned by host "host-a" (http://127.0.0.1:7441), which is offline');
    expect(refused?.message).toContain("fleet.adopt is off");
    // REST says the same.
    const renamed = await fetch(`${b.url}/api/sessions/${sessionId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${b.token}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "mine now" }),
    });
    expect(renamed.status).toBe(409);
    expect(((await renamed.json()) as { message: string }).message).toContain("fleet.adopt is off");
    onB.close();
    const store = await PostgresBackend.open(url, { maxConnections: 1 });
    try {
      expect(await store.getLease(sessionId)).toEqual({ sessionId, hostId: "host-a", epoch: 1 });
    } finally {
      await store.close();
    }
    await stopHost(b.server);
    expect(errorLines(b.server)).toEqual([]);
  }, 90_000);

  it("a host paused past its TTL whose session was adopted: woken, it writes nothing of it and stops its agent", async () => {
    const { url, workDir, a, b } = await twoHosts("adopt-paused", true);
    // A's agent in the middle of a turn: it said it sleeps, and will say more while host A is stopped.
    const { acp: onA, sessionId, turn, agentPid } = await sleepingTurn(a, workDir, "1s");

    a.server.signal("SIGSTOP");
    const onB = new AcpClient(b.acpUrl, b.token);
    try {
      await shownOffline(b, sessionId);
      await onB.initialize();
      await onB.resume(sessionId, workDir);
      expect((await onB.prompt(sessionId, "on B now")).stopReason).toBe("end_turn");
    } finally {
      a.server.signal("SIGCONT");
    }

    // A wakes: past its TTL without a heartbeat it gives its sessions up (the store says B owns this one now); it stops
    // the agent, records the loss, and refuses what the agent said meanwhile.
    await gaveUp(a.server, sessionId, agentPid);
    // The agent's sleep ended while A was stopped: its answer was in the pipe, so the turn ended on A, and its last
    // words reached A, which refused to store them: the
    // client gets no stop reason for a turn not stored.
    expect(await turn).toMatchObject({ data: { code: "turn_not_stored" } });
    onA.close();
    await refusedWrites(a.server, sessionId);
    await eventually(
      async () => (await getJson<View>(a.url, a.token, `/api/sessions/${sessionId}`)).body.host === "host-b",
      "host A shows the session as B's",
    );

    // The journal: A's turn once, ended by the adoption (not by A), then B's turn; nothing of A after the adoption.
    const store = await PostgresBackend.open(url, { maxConnections: 1 });
    try {
      const events = await store.readEvents(sessionId);
      expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
      const texts = events.map((event) => JSON.stringify(event.payload));
      expect(texts.filter((text) => text.includes("Sleeping for"))).toHaveLength(1);
      const ended = events.filter((event) => event.kind === "turn_ended");
      expect(ended.map((event) => event.payload)).toEqual([
        { stopReason: null, error: "the host stopped during the turn" },
        expect.objectContaining({ stopReason: "end_turn" }),
      ]);
      const adoptedAt = events.indexOf(ended[0]!);
      const after = events.slice(adoptedAt + 1);
      expect(after[0]!.payload).toMatchObject({
        update: { _meta: { "berth/notice": { kind: "turn_abandoned", rerun: { prompt: expect.any(Array) } } } },
      });
      // What A's agent said after its sleep reached host A once it woke, and was refused: none of it is here.
      expect(texts.filter((text) => text.includes("Slept for"))).toEqual([]);
      expect(after.filter((event) => event.kind === "turn_started")).toHaveLength(1);
      expect(after.at(-1)!.kind).toBe("turn_ended");
      expect(await store.getLease(sessionId)).toEqual({ sessionId, hostId: "host-b", epoch: 2 });
    } finally {
      await store.close();
    }
    onB.close();
    for (const host of [a, b]) await stopHost(host.server);
    // Woken past its TTL, A heartbeats before it judges the deadline: no error, unless a heartbeat caught in flight by
    // SIGSTOP counted as hung and it gave up its sessions.
    const fence = "no heartbeat reached the shared store within the host TTL: this host gives up its sessions and stops their agents";
    expect(errorLines(a.server).filter((line) => line.msg !== fence)).toEqual([]);
    expect(errorLines(b.server)).toEqual([]);
  }, 90_000);
});
