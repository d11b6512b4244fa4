import { setTimeout as sleep } from "node:timers/promises";
import { FleetDirectory } from "../host/fleet-directory.js";
import { silentLogger } from "../host/logger.js";
import { connect } from "../store/postgres/connection.js";
import { PostgresBackend } from "../store/postgres/postgres-backend.js";
import { findPostgresBinaries, startThrowawayCluster, type ThrowawayCluster } from "../store/postgres/throwaway-cluster.js";
import type { Lease, WriteUnit } from "../store/store-backend.js";
import { fmt, percentile, table } from "./measure.js";

const HOSTS = 10;
const SESSIONS = 1_000;
/** Events written per second by all hosts together, one a session at a time (a unit each). */
const EVENTS_PER_SECOND = 1_000;
const RUN_MS = 10_000;
/** Longer than the run: every read after the first comes from a notification. */
const INTERVAL_MS = 600_000;
/** Connections of each simulated host's pool (a host's default is 10; ten hosts' worth would not fit the server's 100). */
const HOST_CONNECTIONS = 3;
const JOURNAL_WRITERS = 8;
const JOURNAL_MS = 5_000;

/**
 * How closely the fleet directory follows the fleet at scale (docs/fleet.md, "One view"), and what it reads: a throwaway
 * cluster, {@link HOSTS} hosts simulated as a PostgreSQL client each (its own pool and `LISTEN`
 * connection), each owning {@link SESSIONS}/{@link HOSTS} sessions, writing like a host's one writer (events come at an
 * even rate, and each transaction stores what came since the last committed, one unit per event, one NOTIFY per
 * transaction), and reading the others' through a directory of its own. Lag is from a write's start to a directory
 * showing it. Then the commits per second of {@link JOURNAL_WRITERS} journal writers.
 */
export async function runFleetDirectoryBench(): Promise<void> {
  console.log(`\nfleet directory: ${HOSTS} hosts, ${fmt.int(SESSIONS)} sessions, ${fmt.int(EVENTS_PER_SECOND)} events/s in all (loopback)`);
  if (!findPostgresBinaries()) {
    console.log("  skipped: no PostgreSQL server binaries (install Debian's postgresql)");
    return;
  }
  // Durability off: what is measured is the directory's following and the notifications' cost, not this machine's disk
  // flushes (the store benchmark's durable figures); with fsync on and other work running, commits took seconds.
  const cluster = await startThrowawayCluster({ unsafeFast: true });
  try {
    await directoryAtScale(cluster);
    await journalWriters(cluster);
  } finally {
    await cluster.stop();
  }
}

async function directoryAtScale(cluster: ThrowawayCluster): Promise<void> {
  const closing: Array<() => Promise<unknown>> = [];
  try {
    const hostIds = Array.from({ length: HOSTS }, (_, index) => `host-${index}`);
    const backends: PostgresBackend[] = [];
    for (const id of hostIds) {
      const backend = await PostgresBackend.open(cluster.url, { maxConnections: HOST_CONNECTIONS });
      closing.push(() => backend.close());
      await backend.registerHost({ id, url: null });
      backends.push(backend);
    }
    // After the registrations (each raises its host's epochs): every session at epoch 1, the hosts' in turn.
    const admin = connect(cluster.url, { max: 1 });
    closing.push(() => admin.end());
    const t0 = Date.now();
    await admin`
      INSERT INTO sessions (id, agent, cwd, created_at, updated_at, owner_host, epoch)
      SELECT 'bench-' || n, 'demo', '/w', ${t0}, ${t0}, 'host-' || (n % ${HOSTS}), 1 FROM generate_series(0, ${SESSIONS - 1}) AS n`;
    const leasesOf = hostIds.map((hostId, host) =>
      Array.from({ length: SESSIONS / HOSTS }, (_, index): Lease => ({ sessionId: `bench-${index * HOSTS + host}`, hostId, epoch: 1 })),
    );
    const ownerOf = (sessionId: string) => hostIds[Number(sessionId.slice("bench-".length)) % HOSTS];

    const lags: number[] = [];
    /** From a write's start to its commit: the part of the lag that is the database's. */
    const commitTimes: number[] = [];
    /** Per session, its writes: touchedAt → when the write started. */
    const started = new Map<string, Map<number, number>>();
    const directories: FleetDirectory[] = [];
    for (const [index, hostId] of hostIds.entries()) {
      const directory = await FleetDirectory.open(
        backends[index]!,
        hostId,
        (sessionId) => ownerOf(sessionId) === hostId,
        INTERVAL_MS,
        silentLogger(),
      );
      closing.unshift(() => directory.close());
      const shown = new Map<string, number>();
      directory.changed.add((sessionId) => {
        const updatedAt = directory.session(sessionId)?.session.updatedAt ?? 0;
        const seen = shown.get(sessionId) ?? 0;
        const now = performance.now();
        for (const [touchedAt, at] of started.get(sessionId) ?? []) if (touchedAt > seen && touchedAt <= updatedAt) lags.push(now - at);
        shown.set(sessionId, Math.max(seen, updatedAt));
      });
      directories.push(directory);
    }
    const readAtStart = directories.map((directory) => directory.rowsRead());

    let touched = t0;
    let events = 0;
    let commits = 0;
    /** Per session, its last write's touchedAt. */
    const final = new Map<string, number>();
    const perHost = EVENTS_PER_SECOND / HOSTS;
    const begun = performance.now();
    await Promise.all(
      backends.map(async (backend, host) => {
        const leases = leasesOf[host]!;
        let written = 0;
        for (let now = performance.now(); now - begun < RUN_MS; now = performance.now()) {
          // What came since the last commit: one transaction for all of it, as a host's writer does.
          const due = Math.floor(((now - begun) / 1000) * perHost) - written;
          if (due <= 0) {
            await sleep(2);
            continue;
          }
          const units: WriteUnit[] = [];
          for (let i = 0; i < due; i++) {
            const lease = leases[Math.floor(Math.random() * leases.length)]!;
            const touchedAt = ++touched;
            let mine = started.get(lease.sessionId);
            if (!mine) started.set(lease.sessionId, (mine = new Map()));
            mine.set(touchedAt, now);
            final.set(lease.sessionId, touchedAt);
            units.push({ lease, events: [{ kind: "update", payload: { n: touchedAt }, at: touchedAt }], touchedAt });
          }
          for (const outcome of await backend.write(units)) if (!outcome.ok) throw new Error(`a bench write failed: ${outcome.error.message}`);
          commitTimes.push(performance.now() - now);
          written += due;
          events += due;
          commits++;
        }
      }),
    );
    const writeSeconds = (performance.now() - begun) / 1000;
    const deadline = Date.now() + 30_000;
    const behind = () =>
      directories.some((directory, index) =>
        [...final].some(
          ([sessionId, last]) => ownerOf(sessionId) !== hostIds[index] && (directory.session(sessionId)?.session.updatedAt ?? 0) < last,
        ),
      );
    while (behind()) {
      if (Date.now() > deadline) throw new Error("a directory never showed the last writes");
      await sleep(10);
    }
    const seconds = (performance.now() - begun) / 1000;
    const rowsRead = directories.reduce((sum, directory, index) => sum + directory.rowsRead() - readAtStart[index]!, 0);
    /** Each event changes a session that every other host's directory must show. */
    const changes = events * (HOSTS - 1);
    lags.sort((a, b) => a - b);
    commitTimes.sort((a, b) => a - b);
    table(
      `  ${fmt.int(events)} events in ${fmt.int(commits)} transactions over ${writeSeconds.toFixed(1)} s, each followed by ${HOSTS - 1} directories`,
      [
        ["events/s written", fmt.int(events / writeSeconds)],
        ["commits/s (all hosts)", fmt.int(commits / writeSeconds)],
        ["commit p50 / p99 (a write's start to its commit)", `${fmt.ms(percentile(commitTimes, 50))} / ${fmt.ms(percentile(commitTimes, 99))}`],
        ["directory lag p50", fmt.ms(percentile(lags, 50))],
        ["directory lag p99", fmt.ms(percentile(lags, 99))],
        ["directory lag max", fmt.ms(lags.at(-1) ?? 0)],
        ["rows read per second, all directories", fmt.int(rowsRead / seconds)],
        ["rows read per change (an event, for each other host's directory)", (rowsRead / changes).toFixed(2)],
        ["rows read by one directory's first (full) read", fmt.int(readAtStart[0]!)],
      ],
    );
    console.log(`  PostgreSQL ${cluster.version}: a throwaway cluster, fsync and synchronous_commit off; every client on this machine`);
  } finally {
    for (const close of closing) await close().catch(() => undefined);
  }
}

/**
 * Commits per second of {@link JOURNAL_WRITERS} journal writers, each writing one event to a session of its own per
 * transaction (one statement and one NOTIFY each) for {@link JOURNAL_MS}: what the notification queue's lock at commit
 * costs concurrent writers.
 */
async function journalWriters(cluster: ThrowawayCluster): Promise<void> {
  const writer = await PostgresBackend.open(cluster.url, { maxConnections: JOURNAL_WRITERS });
  try {
    await writer.registerHost({ id: "writer", url: null });
    const leases: Lease[] = [];
    for (let n = 0; n < JOURNAL_WRITERS; n++) {
      leases.push(await writer.createSession({ id: `journal-${n}`, agent: "demo", cwd: "/w", createdAt: Date.now() }, "writer"));
    }
    let commits = 0;
    const begun = performance.now();
    await Promise.all(
      leases.map(async (lease) => {
        while (performance.now() - begun < JOURNAL_MS) {
          const [outcome] = await writer.write([{ lease, events: [{ kind: "update", payload: { n: commits }, at: Date.now() }] }]);
          if (!outcome?.ok) throw new Error(`a bench write failed: ${outcome?.error.message}`);
          commits++;
        }
      }),
    );
    const seconds = (performance.now() - begun) / 1000;
    table(`  ${JOURNAL_WRITERS} journal writers, one event per transaction, one NOTIFY each`, [["commits/s", fmt.int(commits / seconds)]]);
  } finally {
    await writer.close().catch(() => undefined);
  }
}
