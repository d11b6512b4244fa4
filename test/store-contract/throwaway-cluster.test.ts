import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/store/postgres/connection.js";
import { startThrowawayCluster, type ThrowawayCluster } from "../../src/store/postgres/throwaway-cluster.js";

describe("a throwaway PostgreSQL cluster", () => {
  const started: ThrowawayCluster[] = [];
  afterEach(async () => {
    for (const cluster of started.splice(0)) await cluster.stop();
  });

  it("runs as an unprivileged user in a temp directory, answers on its socket, and leaves nothing behind", async () => {
    const cluster = await startThrowawayCluster({ unsafeFast: true });
    started.push(cluster);
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${cluster.pid}/status`, "utf8"))![1]);
    if (process.getuid?.() === 0) expect(uid).not.toBe(0);
    else expect(uid).toBe(process.getuid?.());
    expect(statSync(join(cluster.dir, ".s.PGSQL.5432")).isSocket()).toBe(true);

    const sql = connect(cluster.url, { max: 1 });
    const [row] = await sql<{ version: string; user: string }[]>`SELECT current_setting('server_version') AS version, current_user AS user`;
    await sql.end();
    expect(row!.user).toBe("berth");
    expect(Number.parseInt(row!.version, 10)).toBe(cluster.version);

    await cluster.stop();
    expect(existsSync(cluster.dir)).toBe(false);
    // The whole process group is gone: signal 0 to it finds no one.
    expect(() => process.kill(-cluster.pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
    await cluster.stop();
  });

  it("halts for an outage (clients cut off, the socket gone) and starts again on the same data and URL", async () => {
    const cluster = await startThrowawayCluster({ unsafeFast: true });
    started.push(cluster);
    const sql = connect(cluster.url, { max: 1 });
    try {
      await sql`CREATE TABLE kept (n int)`;
      await sql`INSERT INTO kept VALUES (7)`;
      const first = cluster.pid;
      await cluster.halt();
      expect(() => process.kill(-first, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
      expect(existsSync(join(cluster.dir, ".s.PGSQL.5432"))).toBe(false);
      await expect(sql`SELECT 1`).rejects.toThrow();
      await cluster.start();
      expect(cluster.pid).not.toBe(first);
      expect(await sql<{ n: number }[]>`SELECT n FROM kept`).toEqual([{ n: 7 }]);
    } finally {
      await sql.end();
    }
    await cluster.stop();
    expect(existsSync(cluster.dir)).toBe(false);
    await expect(cluster.start()).rejects.toThrow(/removed/);
  });
});
