// A real `berth serve` is killed with SIGKILL again and again, at random moments of a flood,
// a question and a terminal; after each kill the journal must hold every event a client saw
// (over ACP, and over the REST API with its seq), with the same number and payload, and no
// number may ever be given twice.
import Database from "better-sqlite3";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, methods, PROTOCOL_VERSION, type ClientConnection, type SessionUpdate } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { afterAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { JournalEvent } from "../../src/store/events.js";
import { Store } from "../../src/store/store.js";
import { BerthProcess } from "../server/serve-process.js";
import { waitUntil } from "../support/process-table.js";
import { seededRandom, testSeed } from "../support/test-seed.js";

const KILLS = Number(process.env.CRASH_KILLS ?? 50);
/** Replays a failed run's random moments (its seed is printed on failure). */
const SEED_VARIABLE = "CRASH_SEED";
/** Two hosts on two data directories are killed side by side: the rounds mostly wait for processes to start. */
const PIPELINES = 2;
const dirs: string[] = [];
const started: BerthProcess[] = [];

afterAll(async () => {
  for (const server of started) server.killGroup();
  // The last host was stopped politely; a killed host's agents were reaped by the next one.
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Chunk = { update: SessionUpdate; meta?: unknown };

/** What one client connection saw of the session. */
class Watcher {
  readonly chunks: Chunk[] = [];
  questions = 0;
  /** Called on everything received, at once: the test kills the host from inside it, so no later write can catch up. */
  onReceived: () => void = () => undefined;
  readonly connection: ClientConnection;

  constructor(acpUrl: string, token: string, answer: boolean) {
    const stream = createWebSocketStream(acpUrl, { WebSocket: WebSocket as never, headers: { authorization: `Bearer ${token}` } });
    this.connection = client({ name: "crash-watcher" })
      .onNotification(methods.client.session.update, ({ params }) => {
        if (params.update.sessionUpdate === "agent_message_chunk")
          this.chunks.push(params._meta ? { update: params.update, meta: params._meta } : { update: params.update });
        this.onReceived();
      })
      .onRequest(methods.client.session.requestPermission, async ({ params }) => {
        this.questions++;
        this.onReceived();
        if (!answer) return new Promise<never>(() => undefined);
        return { outcome: { outcome: "selected", optionId: params.options[0]!.optionId } };
      })
      .connect(stream);
  }
}

type Seen = Map<number, { kind: string; payload: unknown }>;

async function pollRest(seenByRest: Seen, url: string, token: string, sessionId: string, stop: () => boolean): Promise<void> {
  let after = Math.max(0, ...seenByRest.keys());
  while (!stop()) {
    try {
      const response = await fetch(`${url}/api/sessions/${sessionId}/events?after=${after}&limit=500`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (!response.ok) return;
      const { events } = (await response.json()) as { events: JournalEvent[] };
      for (const event of events) {
        seenByRest.set(event.seq, { kind: event.kind, payload: event.payload });
        after = Math.max(after, event.seq);
      }
    } catch {
      return; // the host was killed under the request
    }
  }
}

function storedEvents(dataDir: string, sessionId: string): { events: JournalEvent[]; questions: string[] } {
  const store = Store.open(join(dataDir, "berth.sqlite"));
  const db = new Database(join(dataDir, "berth.sqlite"), { readonly: true });
  try {
    const questions = db
      .prepare<[string], { id: string }>("SELECT id FROM questions WHERE session_id = ?")
      .all(sessionId)
      .map((row) => row.id);
    return { events: store.events.read(sessionId), questions };
  } finally {
    db.close();
    store.close();
  }
}

interface Tally {
  kills: number;
  restEvents: number;
  chunks: number;
  questions: number;
}

describe("the journal under SIGKILL", () => {
  it(`keeps every event a client saw, with its number and payload, across ${KILLS} kills at random moments; no number is given twice`, async () => {
    const seed = testSeed(SEED_VARIABLE);
    // One sequence per pipeline: the two draw side by side, in an order the machine decides.
    const tallies = await Promise.all(Array.from({ length: PIPELINES }, (_, i) => killLoop(Math.ceil(KILLS / PIPELINES), seededRandom(seed + i))));
    const total = tallies.reduce((sum, t) => ({
      kills: sum.kills + t.kills,
      restEvents: sum.restEvents + t.restEvents,
      chunks: sum.chunks + t.chunks,
      questions: sum.questions + t.questions,
    }));
    expect(total.kills).toBeGreaterThanOrEqual(KILLS);
    expect(total.chunks).toBeGreaterThan(0);
    console.log(
      `journal crash test (${SEED_VARIABLE}=${seed}): ${total.kills} kills, ${total.restEvents} events seen over REST, ${total.chunks} chunks seen over ACP, ${total.questions} questions`,
    );
  }, 300_000);
});

/** One data directory: start, drive, SIGKILL, check the file, again, `kills` times. */
async function killLoop(KILLS: number, random: () => number): Promise<Tally> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-crash-"));
  const workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-crash-work-")));
  dirs.push(dataDir, workDir);
  /** Seq → event as the REST API showed it, over every round. */
  const seenByRest: Seen = new Map();
  let sessionId: string | undefined;
  let lastStoredSeq = 0;
  const askedIds = new Set<string>();
  let kills = 0;
  let chunksChecked = 0;
  for (let round = 0; kills < KILLS; round++) {
    const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir], { XDG_CONFIG_HOME: dataDir });
    started.push(server);
    const { url, token, acpUrl } = await server.startupLine();
    const kind = (["flood", "ask", "run"] as const)[round % 3]!;
    const watcher = new Watcher(acpUrl, token, round % 2 === 0);
    const agent = watcher.connection.agent;
    await agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    if (sessionId === undefined) sessionId = (await agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] })).sessionId;
    else await agent.request(methods.agent.session.resume, { sessionId, cwd: workDir, mcpServers: [] });
    const id = sessionId;
    let killed = false;
    const polling = pollRest(seenByRest, url, token, id, () => killed);
    const text =
      kind === "flood" ? `/flood ${2_000 + Math.floor(random() * 2_000)} 48` : kind === "ask" ? "/ask May I?" : "/run echo crash-test-terminal";
    const prompt = agent.request(methods.agent.session.prompt, { sessionId: id, prompt: [{ type: "text", text }] }).catch(() => undefined);
    // A random moment: after a random number of chunks of a flood, when a question or a terminal's
    // tool call reaches the client, or a little later. The kill is sent from the client's handler.
    const after = kind === "flood" ? 1 + Math.floor(random() * 1_500) : 1;
    const lateBy = kind === "flood" ? 0 : Math.floor(random() * 3);
    let received = 0;
    const kill = () => {
      if (killed) return;
      killed = true;
      server.signal("SIGKILL");
    };
    watcher.onReceived = () => {
      received++;
      if (received === after + lateBy) kill();
      // Nothing more may come (a question nobody answers): a random moment a little later.
      if (received === after && lateBy > 0) setTimeout(kill, random() * 20);
    };
    await Promise.race([prompt, waitUntil(() => killed, "the turn streamed", 20_000)]);
    kill();
    await server.exited;
    kills++;
    await polling;
    watcher.connection.close();

    const { events, questions } = storedEvents(dataDir, id);
    const seqs = events.map((event) => event.seq);
    // Strictly increasing and never reused: every number a client saw still names the event it saw.
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    const bySeq = new Map(events.map((event) => [event.seq, event]));
    for (const [seq, seen] of seenByRest) expect(bySeq.get(seq), `seq ${seq} (round ${round})`).toMatchObject(seen);
    // Every chunk the ACP client received this round is stored, in the order it was received. (The host's own notices
    // at the start of the round, about the turn or question the previous kill left unfinished, the client never got.)
    const stored = events
      .filter((event) => event.seq > lastStoredSeq && event.kind === "update")
      .map((event) => event.payload as { update: SessionUpdate & { _meta?: Record<string, unknown> }; _meta?: unknown })
      .filter((payload) => payload.update.sessionUpdate === "agent_message_chunk" && payload.update._meta?.["berth/notice"] === undefined)
      .map((payload) => (payload._meta ? { update: payload.update, meta: payload._meta } : { update: payload.update }));
    expect(stored.slice(0, watcher.chunks.length), `round ${round} (${kind})`).toEqual(watcher.chunks);
    chunksChecked += watcher.chunks.length;
    // A question and its event: both stored or neither.
    const asked = events.filter((event) => event.kind === "question_asked").map((event) => (event.payload as { questionId: string }).questionId);
    for (const question of asked) askedIds.add(question);
    expect(new Set(questions), `round ${round}`).toEqual(new Set(asked));
    lastStoredSeq = seqs.at(-1) ?? 0;
  }
  // The restarted host after the last kill finds the same journal, and the session carries on.
  const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir], { XDG_CONFIG_HOME: dataDir });
  started.push(server);
  const { url, token } = await server.startupLine();
  const events = new Map<number, JournalEvent>();
  for (let page: JournalEvent[] = []; page.length > 0 || events.size === 0; ) {
    const response = await fetch(`${url}/api/sessions/${sessionId}/events?after=${events.size}&limit=10000`, {
      headers: { authorization: `Bearer ${token}` },
    });
    page = ((await response.json()) as { events: JournalEvent[] }).events;
    for (const event of page) events.set(event.seq, event);
    if (page.length === 0) break;
  }
  for (const [seq, seen] of seenByRest) expect(events.get(seq), `seq ${seq} after the last restart`).toMatchObject(seen);
  server.signal("SIGTERM");
  await server.exited;
  return { kills, restEvents: seenByRest.size, chunks: chunksChecked, questions: askedIds.size };
}
