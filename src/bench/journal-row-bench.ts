/**
 * In `npm run bench`: what a streamed chunk costs the journal, by chunk size: the bytes of its row
 * on disk, and the host's CPU per chunk. A `berth serve` of its own for each size, one client, three `/flood`s; then
 * the SQLite file, read once the host stopped (its WAL checkpointed). And the time to slice a flood line to its row
 * (`updateRow`), in this process: what the journal spends on the host's main thread per chunk.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { methods } from "@agentclientprotocol/sdk";
import { floodChunk } from "../agents/demo-agent/commands/flood.js";
import { updateRow } from "../store/update-row.js";
import { cpuSeconds, spread, table } from "./measure.js";
import { clientWithSession, RUNS, startServe, stopServe } from "./relay-bench.js";

const CHUNKS = 50_000;
const SIZES = [32, 256];
/** Slices of one line per run of the `updateRow` measure. */
const SLICES = 500_000;

interface SizeFigures {
  readonly payloadBytes: number;
  readonly tableBytes: number;
  readonly fileBytes: number;
  readonly cpuMicros: number[];
  readonly mainThreadMicros: number[];
}

/** CPU time (user + system) of the process's main thread so far, in seconds (its task is the one with the process's id). */
function mainThreadCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function measureSize(bytes: number): Promise<SizeFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-row-"));
  const workDir = mkdtempSync(join(tmpdir(), "berth-row-work-"));
  try {
    const serve = await startServe(dataDir);
    const cpuMicros: number[] = [];
    const mainThreadMicros: number[] = [];
    try {
      const { side, sessionId } = await clientWithSession(serve, workDir);
      const flood = (chunks: number) =>
        side.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `/flood ${chunks} ${bytes}` }] });
      await flood(100);
      for (let run = 0; run < RUNS; run++) {
        side.reset();
        const pid = serve.child.pid!;
        const before = cpuSeconds(pid);
        const mainBefore = mainThreadCpuSeconds(pid);
        await flood(CHUNKS);
        cpuMicros.push(((cpuSeconds(pid) - before) * 1e6) / side.chunks);
        mainThreadMicros.push(((mainThreadCpuSeconds(pid) - mainBefore) * 1e6) / side.chunks);
      }
      side.connection.close();
    } finally {
      await stopServe(serve);
    }
    const path = join(dataDir, "berth.sqlite");
    const db = new Database(path, { readonly: true });
    try {
      const chunks = "kind = 'update' AND payload LIKE '%agent_message_chunk%'";
      const { n, payload } = db.prepare(`SELECT count(*) AS n, avg(length(CAST(payload AS BLOB))) AS payload FROM events WHERE ${chunks}`).get() as {
        n: number;
        payload: number;
      };
      // The events' table and its indexes, page by page: what the rows take on disk.
      const { pages } = db
        .prepare(
          "SELECT sum(pgsize) AS pages FROM dbstat WHERE name = 'events' OR name IN (SELECT name FROM sqlite_master WHERE tbl_name = 'events')",
        )
        .get() as { pages: number };
      const events = (db.prepare("SELECT count(*) AS n FROM events").pluck().get() as number) || n;
      return { payloadBytes: payload, tableBytes: pages / events, fileBytes: statSync(path).size / events, cpuMicros, mainThreadMicros };
    } finally {
      db.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
}

const micros = (n: number) => `${n.toFixed(2)} µs`;

/** µs per `updateRow` of a flood chunk's line as the demo agent writes it (the SDK's key order), {@link RUNS} times. */
function sliceMicros(bytes: number): number[] {
  const update = { sessionUpdate: "agent_message_chunk", messageId: crypto.randomUUID(), content: { type: "text", text: floodChunk(0, bytes) } };
  const line = JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: crypto.randomUUID(), update } });
  let kept = 0;
  // CPU time, not elapsed time: on a loaded machine the process waits for a core between slices.
  const run = () => {
    const before = process.cpuUsage();
    for (let i = 0; i < SLICES; i++) kept += updateRow(line).length;
    const used = process.cpuUsage(before);
    return (used.user + used.system) / SLICES;
  };
  run(); // warm up
  const runs = Array.from({ length: RUNS }, run);
  if (kept === 0) throw new Error("nothing sliced");
  return runs;
}

export async function runJournalRowBench(): Promise<void> {
  for (const bytes of SIZES) await printSize(bytes);
}

async function printSize(bytes: number): Promise<void> {
  const figures = await measureSize(bytes);
  table(`Journal rows: ${RUNS} × /flood ${CHUNKS} ${bytes} through berth serve, one client`, [
    ["stored payload of a chunk's row (bytes)", figures.payloadBytes.toFixed(1)],
    ["the events table and its indexes, per event (bytes)", figures.tableBytes.toFixed(1)],
    ["the SQLite file, per event (bytes)", figures.fileBytes.toFixed(1)],
    ["host CPU per relayed chunk, all threads (min / median / max)", spread(figures.cpuMicros, micros)],
    ["host CPU per relayed chunk, main thread (min / median / max)", spread(figures.mainThreadMicros, micros)],
    ["updateRow of the chunk's line (min / median / max)", spread(sliceMicros(bytes), micros)],
  ]);
}
