// A fleet host whose connection to PostgreSQL ends in the middle of a transaction (the server's side closed, no error
// sent first: a proxy, a failover, a server killed): the host goes on, tries the write again once it can reach the
// server, and stores it once. The client library would send the transaction's ROLLBACK on the closed connection, from a
// `setImmediate` where its socket is gone, and the TypeError thrown there stopped the host.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/store/postgres/connection.js";
import { PostgresBackend } from "../../src/store/postgres/postgres-backend.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { SocketProxy } from "../support/socket-proxy.js";
import { AcpClient, errorLines, eventually, FleetTestBed, getJson, messageText, stopHost } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
let proxy: SocketProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await bed.cleanup();
});

describe("a fleet host's connection to PostgreSQL cut in the middle of a transaction", () => {
  it("keeps the host running; the write is tried again and stored once", async () => {
    const storeUrl = await postgres.freshDatabase();
    const proxyDir = bed.tempDir("berth-cut-proxy-");
    // Named as PostgreSQL names its own socket, in a directory of its own.
    proxy = await SocketProxy.open(join(new URL(storeUrl).searchParams.get("host")!, ".s.PGSQL.5432"), { path: join(proxyDir, ".s.PGSQL.5432") });
    const throughProxy = new URL(storeUrl);
    throughProxy.searchParams.set("host", proxyDir);
    const host = await bed.serve(throughProxy.toString(), "host-a", bed.tempDir("berth-cut-a-"), {});
    const acp = new AcpClient(host.acpUrl, host.token);
    await acp.initialize();
    const sessionId = await acp.newSession(bed.tempDir("berth-cut-work-"));

    // A first turn: what a session's first prompt changes besides its journal (its title, its agent's state) is stored.
    expect(await acp.prompt(sessionId, "first")).toMatchObject({ stopReason: "end_turn" });

    const admin = connect(storeUrl, { max: 2 });
    let turn: Promise<{ stopReason: string }> | undefined;
    try {
      await admin.begin(async (tx) => {
        // The session's row is locked: the host's next journal write waits for it inside its transaction.
        await tx`SELECT 1 FROM sessions WHERE id = ${sessionId} FOR UPDATE`;
        turn = acp.prompt(sessionId, "hello through a cut");
        // The journal's statement (in a transaction) waits, not only a single-statement change of the session.
        const journalWaits = () => admin`
          SELECT 1 FROM pg_stat_activity
          WHERE application_name = 'berth' AND wait_event_type = 'Lock' AND state = 'active' AND query LIKE '%WITH claimed AS%'`;
        await eventually(async () => (await journalWaits()).length > 0, "the host's journal write waits on the session's row");
        proxy!.cut();
        await eventually(
          async () => (await getJson<{ status: string }>(host.url, host.token, "/healthz")).body.status === "degraded",
          "the host says degraded",
        );
      });
    } finally {
      await admin.end();
    }

    // The lock is gone and the proxy takes new connections: the write is tried again and stored, and the turn ends.
    expect(await turn).toMatchObject({ stopReason: "end_turn" });
    await eventually(
      async () => (await getJson<{ status: string }>(host.url, host.token, "/healthz")).body.status === "ok",
      "the host says ok again",
    );
    const shared = await PostgresBackend.open(storeUrl, { maxConnections: 1 });
    try {
      const events = await shared.readEvents(sessionId);
      expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.filter((event) => event.kind === "turn_started")).toHaveLength(2);
      expect(messageText(events)).toBe(acp.texts.get(sessionId));
    } finally {
      await shared.close();
    }
    acp.close();
    await stopHost(host.server);
    expect(errorLines(host.server)).toEqual([]);
  }, 90_000);
});
