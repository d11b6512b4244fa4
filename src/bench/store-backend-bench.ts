import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresBackend } from "../store/postgres/postgres-backend.js";
import { findPostgresBinaries, startThrowawayCluster, type ThrowawayCluster } from "../store/postgres/throwaway-cluster.js";
import { SqliteBackend } from "../store/sqlite-backend.js";
import type { Lease, StoreBackend, WriteUnit } from "../store/store-backend.js";

const SINGLE_UNITS = 3_000;
const BATCHES = 1_000;
const BATCH_SIZE = 100;
const CONCURRENT_SESSIONS = 8;
const CONCURRENT_UNITS = 1_000;
const REPLAY_EVENTS = BATCHES * BATCH_SIZE;

// Shaped like an ACP agent_message_chunk update, the journal's most common event.
const text = JSON.stringify({
  update: {
    sessionUpdate: "agent_message_chunk",
    content: { type: "text", text: "Reading src/parser.ts to find where the tokenizer loses the position. " },
  },
});

interface Figures {
  readonly measure: string;
  readonly events: number;
  readonly ms: number;
}

/**
 * Journal append and replay through the store's asynchronous interface, SQLite and PostgreSQL
 * side by side. PostgreSQL is a throwaway cluster with its default durability (each commit's WAL
 * flushed to disk), on a unix socket, unless BERTH_BENCH_POSTGRES_URL names a server to use.
 * Without either, the PostgreSQL column is skipped and says why.
 */
export async function runStoreBackendBench(): Promise<void> {
  console.log("\nstore backends: journal append and replay through the store interface (one host)");
  const dir = mkdtempSync(join(tmpdir(), "berth-store-bench-"));
  let cluster: ThrowawayCluster | undefined;
  try {
    const sqlite = await measureBackend(SqliteBackend.open(join(dir, "bench.db")));
    let postgres: Figures[] | undefined;
    let note: string;
    const external = process.env.BERTH_BENCH_POSTGRES_URL;
    if (external) {
      note = "PostgreSQL: the server at BERTH_BENCH_POSTGRES_URL";
      postgres = await measureBackend(await PostgresBackend.open(external));
    } else if (findPostgresBinaries()) {
      cluster = await startThrowawayCluster();
      note = `PostgreSQL ${cluster.version}: a throwaway cluster (started in ${cluster.startMs.toFixed(0)} ms), unix socket, fsync and synchronous_commit on`;
      postgres = await measureBackend(await PostgresBackend.open(cluster.url));
    } else {
      note = "PostgreSQL: skipped, no server (install Debian's postgresql, or set BERTH_BENCH_POSTGRES_URL)";
    }
    print(sqlite, postgres);
    console.log(`  SQLite: WAL, synchronous NORMAL (no flush per commit), the writer thread's BatchApplier on the caller's thread\n  ${note}`);
  } finally {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureBackend(store: StoreBackend): Promise<Figures[]> {
  try {
    await store.registerHost({ id: "bench", url: null });
    const created = Date.now();
    const session = (id: string) => store.createSession({ id, agent: "bench", cwd: "/bench", createdAt: created }, "bench");
    const unit = (lease: Lease, events: number): WriteUnit => ({
      lease,
      events: Array.from({ length: events }, () => ({ kind: "update", text, at: Date.now() })),
    });
    const figures: Figures[] = [];

    const single = await session("single");
    figures.push(
      await measure("append, one write per event (awaited)", SINGLE_UNITS, async () => {
        for (let i = 0; i < SINGLE_UNITS; i++) check(await store.write([unit(single, 1)]));
      }),
    );
    // The host's one-writer path: a batch the host queued (a turn of the event loop, or more), one transaction.
    const batched = await session("batched");
    figures.push(
      await measure(`append, batches of ${BATCH_SIZE} events`, REPLAY_EVENTS, async () => {
        for (let i = 0; i < BATCHES; i++) check(await store.write(Array.from({ length: BATCH_SIZE }, () => unit(batched, 1))));
      }),
    );
    const leases = await Promise.all(Array.from({ length: CONCURRENT_SESSIONS }, (_, i) => session(`concurrent-${i}`)));
    figures.push(
      await measure(`append, ${CONCURRENT_SESSIONS} sessions at once, one write per event`, CONCURRENT_SESSIONS * CONCURRENT_UNITS, async () => {
        await Promise.all(
          leases.map(async (lease) => {
            for (let i = 0; i < CONCURRENT_UNITS; i++) check(await store.write([unit(lease, 1)]));
          }),
        );
      }),
    );
    figures.push(
      await measure(`replay one session of ${REPLAY_EVENTS.toLocaleString("en")} events`, REPLAY_EVENTS, async () => {
        let replayed = 0;
        for await (const _event of store.replay("batched")) replayed++;
        if (replayed !== REPLAY_EVENTS) throw new Error(`replayed ${replayed} events, expected ${REPLAY_EVENTS}`);
      }),
    );
    return figures;
  } finally {
    await store.close();
  }
}

function check(outcomes: Awaited<ReturnType<StoreBackend["write"]>>): void {
  for (const outcome of outcomes) if (!outcome.ok) throw outcome.error;
}

async function measure(name: string, events: number, work: () => Promise<void>): Promise<Figures> {
  const start = performance.now();
  await work();
  return { measure: name, events, ms: performance.now() - start };
}

function print(sqlite: Figures[], postgres: Figures[] | undefined): void {
  const rate = (f: Figures) => `${Math.round((f.events / f.ms) * 1000).toLocaleString("en")}/s (${f.ms.toFixed(0)} ms)`;
  const table = [
    ["measure", "events", "SQLite", "PostgreSQL"],
    ...sqlite.map((f, i) => [f.measure, f.events.toLocaleString("en"), rate(f), postgres ? rate(postgres[i]!) : "skipped"]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
  const format = (line: string[]) =>
    line.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ");
  console.log(format(table[0]!));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const line of table.slice(1)) console.log(format(line));
}
