// A real `berth serve` is killed with SIGKILL again and again while it makes lifecycle records
// (agents started, turns run, sessions deleted); after each kill, every record a client saw —
// on the operators' event stream (`GET /api/events`) or from `GET /api/records` — is stored with
// the same id and content, and no id a client saw is ever given to another record.
import Database from "better-sqlite3";
import { get, type IncomingMessage } from "node:http";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { client, methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { afterAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { StampedRecord } from "../../src/host/host-records.js";
import { BerthProcess } from "../server/serve-process.js";
import { waitUntil } from "../support/process-table.js";
import { seededRandom, testSeed } from "../support/test-seed.js";

const KILLS = Number(process.env.RECORDS_CRASH_KILLS ?? 20);
/** Replays a failed run's random moments (its seed is printed on failure). */
const SEED_VARIABLE = "RECORDS_CRASH_SEED";
const dirs: string[] = [];
const started: BerthProcess[] = [];

afterAll(async () => {
  for (const server of started) server.killGroup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** `GET /api/events`: each record frame is handed over as soon as its bytes arrive, so the test can kill the host at that very moment. */
function followRecords(url: string, token: string, onRecord: (record: StampedRecord) => void): Promise<void> {
  return new Promise((resolve) => {
    const request = get(`${url}/api/events`, { headers: { authorization: `Bearer ${token}` } }, (res: IncomingMessage) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
        const frames = text.split("\n\n");
        text = frames.pop()!;
        for (const frame of frames) {
          const lines = frame.split("\n");
          if (lines[0] !== "event: record") continue;
          onRecord(JSON.parse(lines[1]!.slice("data: ".length)) as StampedRecord);
        }
      });
      // The host is killed under the stream: it ends, with or without an error.
      res.on("error", () => undefined);
      res.on("close", resolve);
    });
    request.on("error", () => resolve());
  });
}

/** Sessions created, prompted and deleted over ACP and REST until the host is gone: every step makes records. */
async function makeRecords(url: string, acpUrl: string, token: string, workDir: string, killed: () => boolean): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const stream = createWebSocketStream(acpUrl, { WebSocket: WebSocket as never, headers: { authorization: `Bearer ${token}` } });
  const connection = client({ name: "records-crash" }).connect(stream);
  try {
    await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    while (!killed()) {
      const { sessionId } = await connection.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
      await connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
      const created = await fetch(`${url}/api/sessions`, { method: "POST", headers, body: JSON.stringify({ cwd: workDir }) });
      const { id } = (await created.json()) as { id: string };
      await fetch(`${url}/api/sessions/${id}`, { method: "DELETE", headers });
      await fetch(`${url}/api/sessions/${sessionId}`, { method: "DELETE", headers });
    }
  } catch {
    // The host was killed under a request.
  } finally {
    connection.close();
  }
}

async function pollRecords(url: string, token: string, seen: (record: StampedRecord) => void, killed: () => boolean): Promise<void> {
  while (!killed()) {
    try {
      const response = await fetch(`${url}/api/records?limit=1000`, { headers: { authorization: `Bearer ${token}` } });
      for (const record of ((await response.json()) as { records: StampedRecord[] }).records) seen(record);
    } catch {
      return; // the host was killed under the request
    }
  }
}

function storedRecords(dataDir: string): Map<number, { id: number; at: number; kind: string; payload: unknown }> {
  const db = new Database(join(dataDir, "berth.sqlite"), { readonly: true });
  try {
    const rows = db
      .prepare<[], { id: number; at: number; kind: string; payload: string }>("SELECT id, at, kind, payload FROM lifecycle_records")
      .all();
    return new Map(rows.map((row) => [row.id, { ...row, payload: JSON.parse(row.payload) as unknown }]));
  } finally {
    db.close();
  }
}

/** Two hosts on two data directories are killed side by side: the rounds mostly wait for processes to start. */
const PIPELINES = 2;

describe("lifecycle records under SIGKILL", () => {
  it(`keeps every record a client saw, with its id and content, across ${KILLS} kills at random moments; no id is given twice`, async () => {
    const seed = testSeed(SEED_VARIABLE);
    // One sequence per pipeline: the two draw side by side, in an order the machine decides.
    const tallies = await Promise.all(
      Array.from({ length: PIPELINES }, (_, i) => killLoop(Math.floor(KILLS / PIPELINES) + (i < KILLS % PIPELINES ? 1 : 0), seededRandom(seed + i))),
    );
    const seen = tallies.reduce((sum, tally) => sum + tally.seen, 0);
    const streamed = tallies.reduce((sum, tally) => sum + tally.streamed, 0);
    expect(streamed).toBeGreaterThanOrEqual(KILLS);
    console.log(`records crash test (${SEED_VARIABLE}=${seed}): ${KILLS} kills, ${seen} records seen, ${streamed} of them on the event stream`);
  }, 300_000);
});

/** One data directory: start, make records, SIGKILL, check the file, again, `kills` times. */
async function killLoop(kills: number, random: () => number): Promise<{ seen: number; streamed: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-records-crash-"));
  const workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-records-crash-work-")));
  dirs.push(dataDir, workDir);
  /** Id → the record as a client saw it, over every round. */
  const seen = new Map<number, StampedRecord>();
  const reused: string[] = [];
  const see = (record: StampedRecord) => {
    // An id seen again must name the same record: a reused id would show here or in the store.
    const before = seen.get(record.id);
    if (before && !isDeepStrictEqual(before, record)) reused.push(`${record.id}: ${JSON.stringify(before)} then ${JSON.stringify(record)}`);
    seen.set(record.id, record);
  };
  let streamed = 0;
  for (let round = 1; round <= kills; round++) {
    const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir], { XDG_CONFIG_HOME: dataDir });
    started.push(server);
    const { url, token, acpUrl } = await server.startupLine();
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      server.signal("SIGKILL");
    };
    // A random moment: the kill is sent from the stream's handler, the instant a record arrived.
    const after = 1 + Math.floor(random() * 30);
    let received = 0;
    const following = followRecords(url, token, (record) => {
      see(record);
      streamed++;
      if (++received === after) kill();
    });
    const making = makeRecords(url, acpUrl, token, workDir, () => killed);
    const polling = pollRecords(url, token, see, () => killed);
    await waitUntil(() => killed, `${after} records streamed`, 30_000);
    await server.exited;
    await Promise.all([following, making, polling]);

    const stored = storedRecords(dataDir);
    for (const [id, record] of seen) {
      expect(stored.get(id), `record ${id} (${record.record.kind}) after kill ${round}`).toEqual({
        id,
        at: record.at,
        kind: record.record.kind,
        payload: record.record,
      });
    }
    expect(reused).toEqual([]);
  }
  // The host restarted after the last kill serves the same records.
  const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir], { XDG_CONFIG_HOME: dataDir });
  started.push(server);
  const { url, token } = await server.startupLine();
  const response = await fetch(`${url}/api/records?limit=1000`, { headers: { authorization: `Bearer ${token}` } });
  for (const record of ((await response.json()) as { records: StampedRecord[] }).records) see(record);
  expect(reused).toEqual([]);
  server.signal("SIGTERM");
  await server.exited;
  return { seen: seen.size, streamed };
}
