import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { dataPaths } from "../../src/config/paths.js";
import { Store } from "../../src/store/store.js";
import { BerthProcess, cliMain } from "../server/serve-process.js";

const run = promisify(execFile);
/** More than one page of the most GET /api/sessions gives (1,000). */
const SESSIONS = 1_001;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("berth sessions and status read every page of the session list", () => {
  it("list all of more sessions than one page holds", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "berth-cli-pages-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // Stored before the host starts, in one transaction: a thousand POSTs would take the test's time for nothing.
    const store = Store.open(dataPaths(dataDir).database);
    const ids: string[] = [];
    store.transaction(() => {
      for (let i = 0; i < SESSIONS; i++) {
        const id = `listed-${String(i).padStart(4, "0")}`;
        store.sessions.create({ id, agent: "demo", cwd: dataDir, createdAt: Date.UTC(2026, 0, 1) + i });
        ids.push(id);
      }
    });
    store.close();
    const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir], { XDG_CONFIG_HOME: dataDir });
    cleanups.push(async () => {
      server.signal("SIGTERM");
      await server.exited;
      server.killGroup();
    });
    await server.startupLine();

    const berth = async (...args: string[]) =>
      (
        await run(process.execPath, [cliMain, ...args, "--data-dir", dataDir], {
          env: { ...process.env, XDG_CONFIG_HOME: dataDir },
          maxBuffer: 64 << 20,
        })
      ).stdout;
    const listed = JSON.parse(await berth("sessions", "--json")) as Array<{ id: string }>;
    expect(listed.map((session) => session.id).sort()).toEqual(ids);
    const status = JSON.parse(await berth("status", "--json")) as { sessions: Array<{ id: string }> };
    expect(status.sessions).toHaveLength(SESSIONS);
  }, 120_000);
});
