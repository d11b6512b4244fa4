// The heartbeat's deadline (docs/fleet.md, "Heartbeats and lost sessions"): a host gives up its sessions only if its
// heartbeats fail past `fleet.hostTtl` minus one interval, never because the deadline passed while the database was
// already back. A real `berth serve --store postgres://…`; the database refuses the host's connections (its existing ones
// ended) from just after a heartbeat until a moment before the deadline, and takes them again before the next tick.
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/store/postgres/connection.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { processIsRunning } from "../support/process-table.js";
import { errorLines, eventually, FleetTestBed, getJson, sleepingTurn } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
afterEach(() => bed.cleanup());

// Ticks every 5 s; the deadline is 14 s after the last heartbeat that got through (19 s minus one interval). The windows
// are seconds wide on each side, for a loaded machine.
const fleet = { heartbeatInterval: "5s", hostTtl: "19s" };
const DEADLINE_MS = 14_000;
/** When the database takes connections again: after the failing tick 10 s in, before the deadline and the tick 15 s in. */
const BACK_AFTER_MS = 11_000;

type Health = { status: string; heartbeats?: { state: string; since?: string; reason?: string } };

describe("the heartbeat's deadline", () => {
  it("keeps the host's sessions when the database is back before a heartbeat fails past the deadline", async () => {
    const storeUrl = await postgres.freshDatabase();
    const database = decodeURIComponent(new URL(storeUrl).pathname.slice(1));
    const a = await bed.serve(storeUrl, "host-a", bed.tempDir("berth-deadline-a-"), { fleet });
    const { acp, sessionId, agentPid } = await sleepingTurn(a, bed.tempDir("berth-deadline-work-"), "120s");
    const admin = connect(postgres.cluster.url, { max: 1 });
    const store = connect(storeUrl, { max: 1 });
    const health = async () => (await (await fetch(`${a.url}/healthz`)).json()) as Health;
    try {
      const serverMs = async () => (await admin<{ ms: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`)[0]!.ms;
      const heartbeatMs = async () =>
        (await store<{ ms: number }[]>`SELECT (extract(epoch FROM heartbeat_at) * 1000)::float8 AS ms FROM hosts WHERE id = 'host-a'`)[0]!.ms;
      // Just after a heartbeat got through, the database stops taking the host's connections and ends the ones it has.
      const before = await heartbeatMs();
      let last = before;
      await eventually(async () => (last = await heartbeatMs()) > before, "host A heartbeats");
      await store.end();
      await admin.unsafe(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS false`);
      await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database}`;
      const failed = () => a.server.logLines().filter((line) => line.msg?.toString().startsWith("heartbeat failed")).length;
      // Meanwhile /healthz says the host is degraded, and why.
      await eventually(async () => (await health()).heartbeats?.state === "degraded", "/healthz says the heartbeats fail");
      expect(await health()).toMatchObject({
        status: "degraded",
        heartbeats: { state: "degraded", since: expect.any(String), reason: expect.stringMatching(/^the heartbeat failed: /) },
      });
      await eventually(async () => failed() >= 2 && (await serverMs()) >= last + BACK_AFTER_MS, "the heartbeats 5 s and 10 s in failed", 30_000);
      expect(await serverMs()).toBeLessThan(last + DEADLINE_MS);
      await admin.unsafe(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`);
      const backAt = await serverMs();

      // The next tick is past the deadline: its heartbeat gets through, and the host keeps its session.
      const again = connect(storeUrl, { max: 1 });
      try {
        await eventually(async () => {
          const [row] = await again<{ ms: number }[]>`SELECT (extract(epoch FROM heartbeat_at) * 1000)::float8 AS ms FROM hosts WHERE id = 'host-a'`;
          return row!.ms > backAt;
        }, "host A heartbeats again");
      } finally {
        await again.end();
      }
      await eventually(async () => (await health()).status === "ok", "/healthz says ok again");
      expect(await health()).toMatchObject({ heartbeats: { state: "ok" } });
      expect(errorLines(a.server)).toEqual([]);
      expect(a.server.logLines().filter((line) => line.kind === "session_lost")).toEqual([]);
      expect(processIsRunning(agentPid)).toBe(true);
      expect((await getJson<{ host: string }>(a.url, a.token, `/api/sessions/${sessionId}`)).body.host).toBe("host-a");
    } finally {
      acp.close();
      await admin.unsafe(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`);
      await admin.end();
      await store.end();
    }
  }, 120_000);
});
