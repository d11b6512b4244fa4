import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../config/load-config.js";
import { dataPaths } from "../config/paths.js";
import { silentLogger } from "../host/logger.js";
import { everySession } from "../protocol/session-pages.js";
import { startBerth, type RunningBerth } from "../server/serve.js";
import { Store } from "../store/store.js";
import { fmt, spread, table } from "./measure.js";

const SESSIONS = 5_000;
const RUNS = 3;
const WARM_UP = 10;
const CPU_CALLS = 100;

/** Sessions with a short conversation each (a turn: its prompt, the agent's answer, its end), as a list shows them. */
function seed(dataDir: string, workDir: string): void {
  const store = Store.open(dataPaths(dataDir).database);
  const t0 = Date.UTC(2026, 0, 1);
  try {
    store.transaction(() => {
      for (let i = 0; i < SESSIONS; i++) {
        const id = `bench-${String(i).padStart(5, "0")}`;
        const at = t0 + i * 1_000;
        store.sessions.create({ id, agent: "demo", cwd: workDir, title: `Session ${i}`, createdAt: at });
        store.events.append(id, "turn_started", { prompt: [{ type: "text", text: `Fix bug number ${i} in the parser` }] }, at);
        const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `Fixed bug ${i}: the parser now accepts it.` } };
        store.events.append(id, "update", { update }, at + 10);
        store.events.append(id, "turn_ended", { stopReason: "end_turn" }, at + 20);
      }
    });
  } finally {
    store.close();
  }
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function getJson(berth: RunningBerth, path: string): Promise<{ sessions: { id: string }[]; nextCursor?: string; bytes: number }> {
  const response = await fetch(`${berth.server.url}${path}`, { headers: { authorization: `Bearer ${berth.token}` } });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status} ${text}`);
  return { ...(JSON.parse(text) as { sessions: { id: string }[]; nextCursor?: string }), bytes: Buffer.byteLength(text) };
}

/** {@link RUNS} timings of `fn`, one after another. */
async function runs(fn: () => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (let run = 0; run < RUNS; run++) ms.push(await timed(fn));
  return ms;
}

/**
 * The CPU time this process (server and client alike) spends on one call of `fn`, over {@link CPU_CALLS} calls: on a
 * machine loaded by other work, the wall time swings with the share of the cores the process gets, this much less.
 */
async function cpuMsPerCall(fn: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  for (let call = 0; call < CPU_CALLS; call++) await fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1_000 / CPU_CALLS;
}

const spreadMs = (ms: readonly number[]) => `${spread(ms, (n) => n.toFixed(1))} ms`;

/** `GET /api/sessions` with 5,000 sessions over real HTTP: the first page (default size) against every page, after a restart too. */
export async function runSessionListBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-list-"));
  const workDir = mkdtempSync(join(tmpdir(), "berth-bench-list-work-"));
  try {
    seed(dataDir, workDir);
    const start = () => startBerth({ config: parseConfig({}), dataDir, listenHost: "127.0.0.1", port: 0, log: silentLogger() });
    // The first call after a start, whose statements and pages of the file are cold.
    let berth = await start();
    const coldFirstPage = await timed(() => getJson(berth, "/api/sessions"));
    await berth.shutdown();
    berth = await start();
    try {
      let firstBytes = 0;
      let wholeCount = 0;
      // A server that has answered a few lists (its code compiled, the file's pages cached), as one in use has.
      for (let i = 0; i < WARM_UP; i++) await getJson(berth, "/api/sessions");
      const firstPage = await runs(async () => {
        firstBytes = (await getJson(berth, "/api/sessions")).bytes;
      });
      const firstPageCpu = await cpuMsPerCall(() => getJson(berth, "/api/sessions"));
      const wholeList = await runs(async () => {
        wholeCount = (await everySession("/api/sessions", (path) => getJson(berth, path))).length;
      });
      // What GET /api/sessions answered before it had pages: every view, in one JSON body (here without the HTTP).
      const unpaged = await runs(async () => JSON.stringify({ sessions: berth.host.listSessions() }));
      table(
        `Session list, ${fmt.int(SESSIONS)} sessions with a turn each (GET /api/sessions over HTTP, min / median / max of ${RUNS} after ${WARM_UP} first pages)`,
        [
          ["first page (100 sessions, default limit)", spreadMs(firstPage), "<= 20 ms"],
          [`first page, CPU time of the process (mean of ${CPU_CALLS} more)`, `${firstPageCpu.toFixed(1)} ms`],
          ["first page, bytes", fmt.int(firstBytes)],
          ["first page, first call after a start", fmt.ms(coldFirstPage)],
          [`every page (limit=1000, ${fmt.int(wholeCount)} sessions)`, spreadMs(wholeList)],
          ["the whole list in one read, as before pages (in process)", spreadMs(unpaged)],
        ],
      );
    } finally {
      await berth.shutdown();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
}
