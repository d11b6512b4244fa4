// PostgreSQL stopped for 15 s under a real `berth serve` while its demo agent streams, answers
// prompts sent meanwhile and asks a question: afterwards every event a client saw is stored at the
// seq it was shown with, every turn that ended `end_turn` has its text in the journal, no seq repeats,
// and the question reached the client once stored and could be answered.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/store/events.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import { startThrowawayCluster, type ThrowawayCluster } from "../../src/store/postgres/throwaway-cluster.js";
import { waitUntil } from "../support/process-table.js";
import { AcpClient, chunksNotStoredAsShown, errorLines, eventually, FleetTestBed, getJson, messageText, stopHost } from "./fleet-harness.js";

const bed = new FleetTestBed();
let cluster: ThrowawayCluster | undefined;
afterEach(async () => {
  await bed.cleanup();
  await cluster?.stop();
  cluster = undefined;
});

/** How long PostgreSQL is away. */
const OUTAGE_MS = 15_000;
/** The flood sent during the outage: far more than the host's backlog bound (`writeBacklogLimit`). */
const FLOOD = { chunks: 3_000, bytes: 50 };
const BACKLOG_LIMIT = 128 * 1024;

/** A prompt's request, and whether it settled yet. */
function tracked<T>(request: Promise<T>) {
  const state = { settled: false, request };
  void request.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

describe("PostgreSQL unreachable for a while under a fleet host", () => {
  it("loses nothing: what clients saw is stored at its seqs, turns end once stored, a question asked meanwhile is shown and answered", async () => {
    cluster = await startThrowawayCluster({ unsafeFast: true });
    const host = await bed.serve(cluster.url, "host-a", bed.tempDir("berth-outage-a-"), { writeBacklogLimit: BACKLOG_LIMIT });
    const workDir = bed.tempDir("berth-outage-work-");
    const acp = new AcpClient(host.acpUrl, host.token, { seqs: "recorded", permissions: "allowed" });
    await acp.initialize();
    const [sleeper, asker, flooder] = [await acp.newSession(workDir), await acp.newSession(workDir), await acp.newSession(workDir)];

    // A turn under way when the database stops: it goes on talking during the outage.
    const sleeping = tracked(acp.prompt(sleeper!, "/sleep 5s"));
    await waitUntil(() => (acp.texts.get(sleeper!) ?? "").includes("Sleeping for"), "the agent announced its sleep");
    await cluster.halt();
    const stoppedAt = Date.now();
    // Prompts sent while it is away: a question, and a stream of chunks.
    const asking = tracked(acp.prompt(asker!, "/ask May I?"));
    const flooding = tracked(acp.prompt(flooder!, `/flood ${FLOOD.chunks} ${FLOOD.bytes}`));
    type Health = { status: string; store: { reason?: string; pendingWrites: number } };
    const health = async () => (await getJson<Health>(host.url, host.token, "/healthz")).body;
    await eventually(async () => (await health()).status === "degraded", "/healthz says degraded");
    // The agent's flood is held once the backlog passes its bound: the agent waits on its pipe, the host's queue stops growing.
    await waitUntil(() => host.server.logLines().some((line) => line.msg === "agents' output held: too much waits to be stored"), "output held");
    // The outage lasts its length (the scenario, not a check), watching what waits meanwhile.
    let mostPending = 0;
    while (Date.now() - stoppedAt < OUTAGE_MS) {
      mostPending = Math.max(mostPending, (await health()).store.pendingWrites);
      await sleep(100);
    }
    // Each chunk's line is over 200 bytes: the bound, what the agent's pipe and one read hold, far from the whole flood.
    expect(mostPending).toBeLessThan(FLOOD.chunks / 2);
    // Nothing was stored meanwhile, so no turn ended and the question was not shown.
    expect([sleeping.settled, asking.settled, flooding.settled]).toEqual([false, false, false]);
    expect(acp.asked).toEqual([]);
    expect(acp.texts.get(sleeper!) ?? "").not.toContain("Slept for");
    expect(await health()).toMatchObject({
      status: "degraded",
      store: { reason: expect.stringMatching(/shared store \(PostgreSQL\) cannot be reached/) },
    });

    await cluster.start();
    const [slept, answered, flooded] = await Promise.all([sleeping.request, asking.request, flooding.request]);
    expect([slept.stopReason, answered.stopReason, flooded.stopReason]).toEqual(["end_turn", "end_turn", "end_turn"]);
    expect(acp.asked).toEqual([asker]);
    await eventually(
      async () => (await getJson<{ status: string }>(host.url, host.token, "/healthz")).body.status === "ok",
      "/healthz says ok again",
    );

    const shared = await PostgresBackend.open(cluster.url, { maxConnections: 1 });
    try {
      for (const sessionId of [sleeper!, asker!, flooder!]) {
        const events = await shared.readEvents(sessionId);
        // Every seq once, none missing.
        expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
        // Every chunk the client was shown is stored at the seqs it was shown with, and nothing else was said.
        expect(chunksNotStoredAsShown(acp.shown.get(sessionId) ?? [], events)).toEqual([]);
        expect(messageText(events)).toBe(acp.texts.get(sessionId) ?? "");
        // Each turn: its prompt and its end, with the stop reason the client got.
        expect(events.filter((event) => event.kind === "turn_started")).toHaveLength(1);
        expect(events.filter((event) => event.kind === "turn_ended").map((event) => event.payload)).toEqual([
          { stopReason: "end_turn", error: null },
        ]);
        expect(await getJson<{ events: JournalEvent[] }>(host.url, host.token, `/api/sessions/${sessionId}/events?limit=10000`)).toMatchObject({
          body: { events },
        });
      }
      expect(messageText(await shared.readEvents(sleeper!))).toContain("Slept for 5s.");
      expect(messageText(await shared.readEvents(asker!))).toContain("You chose: allow");
      expect(messageText(await shared.readEvents(flooder!))).toHaveLength(FLOOD.chunks * FLOOD.bytes);
      const kinds = (await shared.readEvents(asker!)).map((event) => event.kind);
      expect(kinds).toEqual(expect.arrayContaining(["question_asked", "question_resolved"]));
      expect(await shared.listPendingQuestions(asker!)).toEqual([]);
    } finally {
      await shared.close();
    }
    // Held again and again while the flood catches up after the outage, and flowing at the end.
    const backlog = host.server.logLines().flatMap((line) => (/^agents' output/.test(String(line.msg)) ? [line.msg] : []));
    expect(backlog.at(-1)).toBe("agents' output flows again");
    expect(backlog.filter((msg) => msg === "agents' output flows again")).toHaveLength(backlog.length / 2);
    await stopHost(host.server);
    expect(errorLines(host.server)).toEqual([]);
  }, 180_000);
});
