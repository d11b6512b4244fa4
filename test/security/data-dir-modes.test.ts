import { chmodSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { startBerth } from "../../src/server/serve.js";
import { capturingLogger } from "../support/capturing-logger.js";

/**
 * Issue 9 item 6: an existing data directory stayed 0755 with a world-readable journal. Berth now
 * makes it 0700 with every file 0600 (leftovers of older runs included) and warns when it was open.
 */

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

/** Every file and folder under `dir`, with its mode. */
function modes(dir: string, prefix = ""): Record<string, string> {
  const found: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    found[prefix + entry.name] = modeOf(path);
    if (entry.isDirectory()) Object.assign(found, modes(path, `${prefix}${entry.name}/`));
  }
  return found;
}

describe("the data directory is its owner's alone", () => {
  it("an open data directory of an older run: tightened to 0700 and 0600, with a warning; new files 0600 too", async () => {
    const dataDir = join(realpathSync(mkdtempSync(join(tmpdir(), "berth-modes-"))), "data");
    temps.push(join(dataDir, ".."));
    mkdirSync(join(dataDir, "terminal-output"), { recursive: true, mode: 0o755 });
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, "terminal-output"), 0o755);
    writeFileSync(join(dataDir, "terminal-output", "old.log"), "old output", { mode: 0o644 });
    writeFileSync(join(dataDir, "agent-logins.json"), "{}", { mode: 0o644 });

    const { log, lines } = capturingLogger();
    const berth = await startBerth({ config: parseConfig({}), dataDir, listenHost: "127.0.0.1", port: 0, log });
    try {
      const session = await berth.host.createSession({ cwd: join(dataDir, "..") });
      await berth.host.prompt(session.id, [{ type: "text", text: "/run echo hello" }]);
      expect(modeOf(dataDir)).toBe("700");
      const all = modes(dataDir);
      // The journal and its -wal/-shm, the token, the lock, host.json, agent state, terminal output.
      expect(Object.keys(all)).toEqual(
        expect.arrayContaining(["berth.sqlite", "berth.sqlite-wal", "token", "host.lock", "host.json", "terminal-output/old.log"]),
      );
      expect(readdirSync(join(dataDir, "terminal-output")).length).toBeGreaterThan(1);
      // Agents write their own state under agent-state/ with the user's umask (Berth leaves its
      // children's umask alone); the folder itself is 0700, and the next start tightens the rest.
      expect(all["agent-state"]).toBe("700");
      for (const [path, mode] of Object.entries(all).filter(([path]) => !path.startsWith("agent-state/"))) {
        const isDirectory = statSync(join(dataDir, path)).isDirectory();
        expect({ path, mode }).toEqual({ path, mode: isDirectory ? "700" : "600" });
      }
      const warning = lines.find(
        (line) => line.msg === "the data directory was accessible to other users; it is now 0700 and Berth's files in it 0600",
      );
      expect(warning).toMatchObject({
        level: 40,
        mode: "755",
        tightened: expect.arrayContaining([".", "terminal-output", "terminal-output/old.log", "agent-logins.json"]),
      });
    } finally {
      await berth.shutdown();
    }
  });

  it("a data directory pointed at a project by mistake: Berth's own files are made private, the project's left as they were", async () => {
    const project = realpathSync(mkdtempSync(join(tmpdir(), "berth-modes-project-")));
    temps.push(project);
    mkdirSync(join(project, "src"), { mode: 0o755 });
    chmodSync(join(project, "src"), 0o755);
    writeFileSync(join(project, "src", "a.txt"), "code", { mode: 0o644 });
    writeFileSync(join(project, "README"), "read me", { mode: 0o644 });
    const berth = await startBerth({ config: parseConfig({}), dataDir: project, listenHost: "127.0.0.1", port: 0, log: capturingLogger().log });
    try {
      const all = modes(project);
      expect({ src: all.src, "src/a.txt": all["src/a.txt"], README: all.README }).toEqual({ src: "755", "src/a.txt": "644", README: "644" });
      expect({ database: all["berth.sqlite"], token: all.token }).toEqual({ database: "600", token: "600" });
    } finally {
      await berth.shutdown();
    }
  });

  it("a data directory that is already tight starts with no warning", async () => {
    const dataDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-modes-")));
    temps.push(dataDir);
    const { log, lines } = capturingLogger();
    const berth = await startBerth({ config: parseConfig({}), dataDir, listenHost: "127.0.0.1", port: 0, log });
    await berth.shutdown();
    expect(lines.filter((line) => line.level === 40)).toEqual([]);
    expect(modeOf(dataDir)).toBe("700");
  });
});
