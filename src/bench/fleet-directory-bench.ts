import { FleetDirectory } from "../host/fleet-directory.js";
import { silentLogger } from "../host/logger.js";
import { connect } from "../store/postgres/connection.js";
import { PostgresBackend } from "../store/postgres/postgres-backend.js";
import { findPostgresBinaries, startThrowawayCluster, type ThrowawayCluster } from "../store/postgres/throwaway-cluster.js";
import type { Lease } from "../store/store-backend.js";
import { fmt, percentile, table } from "./measure.js";

const PEERS = 10;
const SESSIONS = 1_000;
/** Sessions written at once, each by a loop of its own (one event per transaction). */
const STREAMS = 4;
const STREAM_MS = 8_000;
/** Longer than the run: every read after the first comes from a notification. */
const INTERVAL_MS = 600_000;

/**
 * How closely the fleet directory follows another host's journal (docs/fleet.md, "One view"): a
 * throwaway cluster with {@link SESSIONS} sessions of one writing host, {@link PEERS} hosts simulated
 * as one directory each (each on a client of its own), and {@link STREAMS} sessions written one event
 * per transaction for {@link STREAM_MS}. Lag is from a write's start to a directory showing it.
 */
export async function runFleetDirectoryBench(): Promise<void> {
  console.log(`\nfleet directory: ${PEERS} peers following ${STREAMS} streams among ${fmt.int(SESSIONS)} sessions (loopback)`);
  if (!findPostgresBinaries()) {
    console.log("  skipped: no PostgreSQL server binaries (install Debian's postgresql)");
    return;
  }
  let cluster: ThrowawayCluster | undefined;
  const closing: Array<() => Promise<unknown>> = [];
  try {
    cluster = await startThrowawayCluster();
    const admin = connect(cluster.url, { max: 1 });
    closing.push(() => admin.end());
    const writer = await PostgresBackend.open(cluster.url, { maxConnections: STREAMS });
    closing.push(() => writer.close());
    await writer.registerHost({ id: "writer", url: null });
    const t0 = Date.now();
    await admin`
      INSERT INTO sessions (id, agent, cwd, created_at, updated_at, owner_host, epoch)
      SELECT 'bench-' || n, 'demo', '/w', ${t0}, ${t0}, 'writer', 1 FROM generate_series(1, ${SESSIONS}) AS n`;

    const lags: number[] = [];
    /** Per session, the writes not yet shown by each directory: touchedAt → when the write started. */
    const started = new Map<string, Map<number, number>>();
    const directories: FleetDirectory[] = [];
    for (let peer = 0; peer < PEERS; peer++) {
      const backend = await PostgresBackend.open(cluster.url, { maxConnections: 2 });
      closing.push(() => backend.close());
      await backend.registerHost({ id: `peer-${peer}`, url: null });
      const directory = await FleetDirectory.open(backend, `peer-${peer}`, () => false, INTERVAL_MS, silentLogger());
      closing.unshift(() => directory.close());
      const shown = new Map<string, number>();
      directory.changed.add((sessionId) => {
        const updatedAt = directory.session(sessionId)?.session.updatedAt ?? 0;
        const seen = shown.get(sessionId) ?? 0;
        for (const [touchedAt, at] of started.get(sessionId) ?? []) if (touchedAt > seen && touchedAt <= updatedAt) lags.push(performance.now() - at);
        shown.set(sessionId, Math.max(seen, updatedAt));
      });
      directories.push(directory);
    }
    const readAtStart = directories.map((directory) => directory.rowsRead());

    const leases: Lease[] = [];
    for (let n = 1; n <= STREAMS; n++) leases.push(await writer.acquireLease(`bench-${n}`, "writer"));
    let writes = 0;
    let touched = t0;
    /** Per session, its last write's touchedAt. */
    const final = new Map<string, number>();
    const until = performance.now() + STREAM_MS;
    const begun = performance.now();
    await Promise.all(
      leases.map(async (lease) => {
        const mine = new Map<number, number>();
        started.set(lease.sessionId, mine);
        while (performance.now() < until) {
          const touchedAt = ++touched;
          mine.set(touchedAt, performance.now());
          const [outcome] = await writer.write([{ lease, events: [{ kind: "update", payload: { n: touchedAt }, at: touchedAt }], touchedAt }]);
          if (!outcome?.ok) throw new Error(`a bench write failed: ${outcome?.error.message}`);
          writes++;
          final.set(lease.sessionId, touchedAt);
        }
      }),
    );
    const deadline = Date.now() + 30_000;
    const behind = () =>
      directories.some((directory) => [...final].some(([sessionId, last]) => (directory.session(sessionId)?.session.updatedAt ?? 0) < last));
    while (behind()) {
      if (Date.now() > deadline) throw new Error("a directory never showed the last writes");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const seconds = (performance.now() - begun) / 1000;
    const rowsRead = directories.reduce((sum, directory, index) => sum + directory.rowsRead() - readAtStart[index]!, 0);
    lags.sort((a, b) => a - b);
    table(`  ${fmt.int(writes)} writes (one event, one transaction each) in ${seconds.toFixed(1)} s, followed by each of ${PEERS} directories`, [
      ["directory lag p50", fmt.ms(percentile(lags, 50))],
      ["directory lag p99", fmt.ms(percentile(lags, 99))],
      ["writes/s", fmt.int(writes / seconds)],
      ["rows read per second, all directories", fmt.int(rowsRead / seconds)],
      ["rows read per write per directory", (rowsRead / writes / PEERS).toFixed(2)],
      ["rows read by one directory's first (full) read", fmt.int(readAtStart[0]!)],
    ]);
    console.log(`  PostgreSQL ${cluster.version}: a throwaway cluster, fsync and synchronous_commit on; every client on this machine`);
  } finally {
    for (const close of closing) await close().catch(() => undefined);
    await cluster?.stop();
  }
}
