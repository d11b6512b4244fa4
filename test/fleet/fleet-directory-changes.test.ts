// The fleet directory on a real shared PostgreSQL store (docs/fleet.md, "One view"): it follows another host's
// creations, changes and deletions from the notifications naming them, reads only what they name, and reads everything
// again when its listening connection comes back (what was notified meanwhile is lost).
import { afterEach, describe, expect, it } from "vitest";
import { FleetDirectory } from "../../src/host/fleet-directory.js";
import { silentLogger } from "../../src/host/logger.js";
import { connect, type Sql } from "../../src/store/postgres/connection.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import type { StoreBackend } from "../../src/store/store-backend.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { waitUntil } from "../support/process-table.js";

const T0 = Date.UTC(2025, 0, 1);
/** Longer than any test: every read after the first comes from a notification or a reconnection. */
const INTERVAL_MS = 600_000;

describe("the fleet directory follows another host's changes", () => {
  const postgres = usePostgresCluster();
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Host B writes on its own client; host A's directory reads on another. */
  async function fleet() {
    const url = await postgres.freshDatabase();
    const open = async () => {
      const backend = await PostgresBackend.open(url, { maxConnections: 2 });
      cleanups.push(() => backend.close());
      return backend;
    };
    const [a, b] = [await open(), await open()];
    await a.registerHost({ id: "host-a", url: null });
    await b.registerHost({ id: "host-b", url: null });
    const admin = connect(url, { max: 1 });
    cleanups.push(() => admin.end());
    const directoryOn = async (backend: StoreBackend) => {
      const directory = await FleetDirectory.open(backend, "host-a", () => false, INTERVAL_MS, silentLogger());
      cleanups.push(() => directory.close());
      return directory;
    };
    return { a, b, admin, directoryOn };
  }

  const update = (n: number) => ({ kind: "update", payload: { n }, at: T0 + n });

  it("sees a session another host creates, changes (title, journal, a question) and deletes", async () => {
    const { a, b, directoryOn } = await fleet();
    const directory = await directoryOn(a);
    const lease = await b.createSession({ id: "s", agent: "demo", cwd: "/w", createdAt: T0 }, "host-b");
    await waitUntil(() => directory.session("s")?.owner?.id === "host-b", "the directory lists the new session as host B's");

    await b.updateSession(lease, { title: "renamed" });
    await waitUntil(() => directory.session("s")?.session.title === "renamed", "the directory shows the new title");
    const [outcome] = await b.write([{ lease, events: [update(5)], touchedAt: T0 + 5 }]);
    expect(outcome?.ok).toBe(true);
    await waitUntil(() => directory.session("s")?.session.updatedAt === T0 + 5, "the directory shows the journal write");
    await b.write([{ lease, events: [], question: { id: "q1", kind: "permission", request: { ask: 1 }, askedAt: T0 + 6 } }]);
    await waitUntil(() => directory.question("q1") !== undefined, "the directory shows the question");
    expect(directory.session("s")?.pendingQuestions.map((question) => question.id)).toEqual(["q1"]);

    const gone: string[] = [];
    directory.gone.add((id) => gone.push(id));
    await b.deleteSession({ ...lease, epoch: (await b.getLease("s"))!.epoch });
    await waitUntil(() => directory.session("s") === undefined, "the directory drops the deleted session");
    expect(gone).toEqual(["s"]);
    expect(directory.question("q1")).toBeUndefined();
  });

  it("catches up on what changed while its listening connection was down", async () => {
    const { a, b, admin, directoryOn } = await fleet();
    await b.createSession({ id: "s", agent: "demo", cwd: "/w", createdAt: T0 }, "host-b");
    const directory = await directoryOn(a);
    expect(directory.session("s")?.session.title).toBeNull();
    // The listening connection dropped; a change lands whose notification it never hears (written with none at all,
    // so it cannot arrive on the new connection either): only a full read after listening again finds it.
    await terminateListener(admin);
    await admin`UPDATE sessions SET title = 'changed unheard' WHERE id = 's'`;
    await admin`INSERT INTO sessions (id, agent, cwd, created_at, updated_at, owner_host, epoch) VALUES ('t', 'demo', '/w', ${T0}, ${T0}, 'host-b', 1)`;
    await waitUntil(
      () => directory.session("s")?.session.title === "changed unheard" && directory.session("t") !== undefined,
      "the directory shows what changed while it was not listening",
    );
  });

  it("reads, during a stream on one session among many, rows in proportion to what changed, not to all sessions", async () => {
    const { a, b, admin, directoryOn } = await fleet();
    const SESSIONS = 1_000;
    await admin`
      INSERT INTO sessions (id, agent, cwd, created_at, updated_at, owner_host, epoch)
      SELECT 'bulk-' || n, 'demo', '/w', ${T0}, ${T0}, 'host-b', 1 FROM generate_series(1, ${SESSIONS}) AS n`;
    const lease = await b.createSession({ id: "streamed", agent: "demo", cwd: "/w", createdAt: T0 }, "host-b");
    const directory = await directoryOn(a);
    expect(directory.sessions()).toHaveLength(SESSIONS + 1);
    const before = directory.rowsRead();

    const WRITES = 40;
    for (let n = 1; n <= WRITES; n++) {
      const [outcome] = await b.write([{ lease, events: [update(n)], touchedAt: T0 + n }]);
      expect(outcome?.ok).toBe(true);
    }
    await waitUntil(() => directory.session("streamed")?.session.updatedAt === T0 + WRITES, "the directory shows the last write");
    // Each refresh reads the hosts (2) and the streamed session's lease, row and questions: at most one per write.
    const read = directory.rowsRead() - before;
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThanOrEqual(WRITES * 4);
  });
});

/** Ends the server process of every connection listening for the fleet's changes (the directory's). */
async function terminateListener(admin: Sql): Promise<void> {
  const ended = await admin`
    SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'listen %' AND pid <> pg_backend_pid()`;
  expect(ended.length).toBeGreaterThan(0);
}
