// Three real `berth serve` hosts on one PostgreSQL, which is stopped for 17 s while agents of two hosts
// stream, a question waits for its answer, and the third host is paused (SIGSTOP) for most of the outage
// and resumed (SIGCONT) after it. Afterwards: every chunk any client was shown is stored at the seqs it was
// shown with, every turn that ended `end_turn` has its text in the journal, no seq repeats, the question is
// answered once (a second answer refused), and every session is run by a host that answers for it.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/store/events.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import { waitUntil } from "../support/process-table.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { AcpClient, chunksNotStoredAsShown, errorLines, eventually, FleetTestBed, getJson, messageText, stopHost } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
afterEach(() => bed.cleanup());

/** How long PostgreSQL is away. */
const OUTAGE_MS = 17_000;
const SECRET = "chaos-test-secret-0123456789abcdef";
/**
 * A TTL well past the outage: no host may take another's sessions for the outage alone, nor fence itself (on a loaded
 * machine the restarted server and the reconnections add seconds to the time without a heartbeat).
 */
const fleet = { heartbeatInterval: "250ms", hostTtl: "60s", secret: SECRET, adopt: true };
/** A flood's chunks: the one under way when PostgreSQL stops, and those prompted while it is away. */
const FLOOD = { before: 4_000, during: 1_500, bytes: 50 };

type Host = Awaited<ReturnType<FleetTestBed["serve"]>>;
type Health = { status: string };
type Answer = { status: number; body: { state?: string; error?: string; message?: string } };

/**
 * Whether an answer was taken: stored (200), or taken and queued because the owner's store was still catching up on
 * the outage's writes past its `writeTimeout` (503 `store_unavailable`, saying it stays queued).
 */
function taken(answer: Answer): boolean {
  if (answer.status === 200) return answer.body.state === "answered";
  return answer.status === 503 && answer.body.error === "store_unavailable" && /stays queued/.test(answer.body.message ?? "");
}

/** A client of the host that records the seqs it is shown and leaves questions to REST. */
async function clientOf(host: Host): Promise<AcpClient> {
  const acp = new AcpClient(host.acpUrl, host.token, { seqs: "recorded" });
  await acp.initialize();
  return acp;
}

async function answer(host: Host, questionId: string): Promise<Answer> {
  const response = await fetch(`${host.url}/api/questions/${questionId}/answer`, {
    method: "POST",
    headers: { authorization: `Bearer ${host.token}`, "content-type": "application/json" },
    body: JSON.stringify({ optionId: "allow" }),
  });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

const health = async (host: Host) => (await getJson<Health>(host.url, host.token, "/healthz")).body.status;

/** Whether the process is stopped by a signal (its state in /proc: T). */
function isStopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).startsWith("T");
}

/** The seqs of a journal's `turn_ended` events with stop reason `end_turn` whose turn has no message text of the agent's. */
function silentEndTurns(events: readonly JournalEvent[]): number[] {
  const silent: number[] = [];
  let started = 0;
  events.forEach((event, index) => {
    if (event.kind === "turn_started") started = index;
    const ended = event.kind === "turn_ended" && (event.payload as { stopReason?: string }).stopReason === "end_turn";
    if (ended && messageText(events.slice(started, index)) === "") silent.push(event.seq);
  });
  return silent;
}

describe("PostgreSQL stopped under three hosts, one of them paused meanwhile", () => {
  it("loses nothing, repeats no seq, answers the question once, and leaves every session run by a host", async () => {
    const storeUrl = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-chaos-work-");
    const serve = (id: string) => bed.serve(storeUrl, id, bed.tempDir(`berth-chaos-${id}-`), { fleet });
    const [a, b, c] = await Promise.all([serve("host-a"), serve("host-b"), serve("host-c")]);
    const [onA, onB, onC] = await Promise.all([clientOf(a), clientOf(b), clientOf(c)]);
    const [aStream, aDuring, aAsk] = [await onA.newSession(workDir), await onA.newSession(workDir), await onA.newSession(workDir)];
    const [bStream, bDuring, bAsk] = [await onB.newSession(workDir), await onB.newSession(workDir), await onB.newSession(workDir)];
    const [cSleep, cIdle] = [await onC.newSession(workDir), await onC.newSession(workDir)];
    const creator = new Map<string, AcpClient>([
      ...[aStream, aDuring, aAsk].map((id) => [id, onA] as const),
      ...[bStream, bDuring, bAsk].map((id) => [id, onB] as const),
      ...[cSleep, cIdle].map((id) => [id, onC] as const),
    ]);

    /** Each prompt, its session, what its text must hold once it ended `end_turn`, and its outcome (a stop reason or the refusal). */
    const turns: Array<{ sessionId: string; says: string | number; outcome: Promise<string> }> = [];
    const prompt = (acp: AcpClient, sessionId: string, text: string, says: string | number) => {
      const outcome = acp.prompt(sessionId, text).then(
        (response) => response.stopReason,
        (error: unknown) => `refused: ${(error as Error).message}`,
      );
      turns.push({ sessionId, says, outcome });
    };

    // Before the outage: B's question is asked (stored, shown), C's agent sleeps, A's and B's agents stream.
    prompt(onB, bAsk, "/ask May B go on?", "You chose: allow");
    await waitUntil(() => onB.asked.includes(bAsk), "B's client was asked");
    prompt(onC, cSleep, "/sleep 8s", "Slept for 8s.");
    await waitUntil(() => (onC.texts.get(cSleep) ?? "").includes("Sleeping for"), "C's agent sleeps");
    prompt(onA, aStream, `/flood ${FLOOD.before} ${FLOOD.bytes}`, FLOOD.before * FLOOD.bytes);
    prompt(onB, bStream, `/flood ${FLOOD.before} ${FLOOD.bytes}`, FLOOD.before * FLOOD.bytes);
    await waitUntil(() => onA.texts.has(aStream) && onB.texts.has(bStream), "A's and B's agents stream");

    await postgres.cluster.halt();
    const stoppedAt = Date.now();
    try {
      // While it is away: more streams on A and B, and a question asked on A.
      prompt(onA, aDuring, `/flood ${FLOOD.during} ${FLOOD.bytes}`, FLOOD.during * FLOOD.bytes);
      prompt(onB, bDuring, `/flood ${FLOOD.during} ${FLOOD.bytes}`, FLOOD.during * FLOOD.bytes);
      prompt(onA, aAsk, "/ask May A go on?", "You chose: allow");
      // Host C is paused once it found the database gone (its sleeping agent's last words wait in the pipe).
      await eventually(async () => (await health(c)) === "degraded", "host C says its store is degraded");
      c.server.signal("SIGSTOP");
      await waitUntil(() => isStopped(c.server.pid), "host C is stopped");
      // The outage lasts its length (the scenario, not a check).
      while (Date.now() - stoppedAt < OUTAGE_MS) await sleep(200);
      expect(await Promise.all([health(a), health(b)])).toEqual(["degraded", "degraded"]);
      expect(onA.asked).toEqual([]);
      await postgres.cluster.start();
      await eventually(async () => (await health(a)) === "ok", "host A stores again");
    } finally {
      c.server.signal("SIGCONT");
    }

    // Each question is answered once through another host than its owner's (relayed to it); a second answer is refused.
    type Questions = { questions: Array<{ id: string; sessionId: string }> };
    const pendingOnA = async () => (await getJson<Questions>(a.url, a.token, "/api/questions")).body.questions;
    await eventually(async () => (await pendingOnA()).length === 2, "both questions are listed on host A", 30_000);
    const questionOf = new Map((await pendingOnA()).map((question) => [question.sessionId, question.id]));
    for (const [sessionId, first, second] of [
      [bAsk, a, c],
      [aAsk, c, b],
    ] as const) {
      const firstAnswer = await answer(first, questionOf.get(sessionId)!);
      expect(taken(firstAnswer), JSON.stringify(firstAnswer)).toBe(true);
      expect(await answer(second, questionOf.get(sessionId)!)).toMatchObject({ status: 409, body: { error: "question_already_resolved" } });
    }
    expect(onA.asked).toEqual([aAsk]);

    // Every turn ended, each with its whole text (C kept its sessions: the outage and its pause are within its TTL).
    const outcomes = await Promise.all(turns.map((turn) => turn.outcome));
    expect(outcomes).toEqual(turns.map(() => "end_turn"));
    for (const host of [a, b, c]) await eventually(async () => (await health(host)) === "ok", `${host.url} says ok again`, 30_000);

    const shared = await PostgresBackend.open(storeUrl, { maxConnections: 1 });
    try {
      const journal = async (sessionId: string) => shared.readEvents(sessionId);
      for (const [sessionId, acp] of creator) {
        const events = await journal(sessionId);
        // Every seq once, none missing; what the client was shown is stored at those seqs, and nothing else was said.
        expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
        expect(chunksNotStoredAsShown(acp.shown.get(sessionId) ?? [], events)).toEqual([]);
        expect(messageText(events)).toBe(acp.texts.get(sessionId) ?? "");
        expect(silentEndTurns(events)).toEqual([]);
        expect(events.filter((event) => event.kind === "turn_started")).toHaveLength(events.filter((event) => event.kind === "turn_ended").length);
      }
      for (const turn of turns) {
        const text = messageText(await journal(turn.sessionId));
        if (typeof turn.says === "number") expect(text).toHaveLength(turn.says);
        else expect(text).toContain(turn.says);
      }

      // No session is left read-only on every host: each is owned by a host online, and a client of host A has it
      // answered (relayed to its owner, or adopted if its owner gave it up).
      const online = new Set((await shared.listHosts()).filter((host) => host.alive).map((host) => host.id));
      expect(online).toEqual(new Set(["host-a", "host-b", "host-c"]));
      for (const sessionId of creator.keys()) {
        if (creator.get(sessionId) !== onA) await onA.resume(sessionId, workDir);
        expect(await onA.prompt(sessionId, `still here ${sessionId}`)).toMatchObject({ stopReason: "end_turn" });
        const lease = await shared.getLease(sessionId);
        expect(online.has(lease?.hostId ?? "nobody"), `${sessionId}: ${JSON.stringify(lease)}`).toBe(true);
      }
      // Whatever host A's client was shown of them is stored as shown too.
      for (const sessionId of creator.keys()) {
        const events = await journal(sessionId);
        expect(chunksNotStoredAsShown(onA.shown.get(sessionId) ?? [], events)).toEqual([]);
        expect(messageText(events)).toContain(`still here ${sessionId}`);
        expect(silentEndTurns(events)).toEqual([]);
      }
    } finally {
      await shared.close();
    }

    for (const acp of [onA, onB, onC]) acp.close();
    for (const host of [a, b, c]) await stopHost(host.server);
    expect([a, b, c].flatMap((host) => errorLines(host.server))).toEqual([]);
  }, 240_000);
});
