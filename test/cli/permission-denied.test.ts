import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { cliMain } from "../server/serve-process.js";

const run = promisify(execFile);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Root may read anything: run as root, the command runs without the capabilities that let it (so a directory it may
 * not read stands for another user's, and the checkout need not be readable by any other user).
 */
const AS_OTHER_USER = process.getuid?.() === 0 ? ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"] : [];

/** A data directory with a token and a host file naming a live process (this test's), that the command's user may not read. */
function othersDataDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "berth-others-")));
  dirs.push(dir);
  writeFileSync(join(dir, "token"), "t".repeat(43), { mode: 0o600 });
  writeFileSync(join(dir, "host.json"), JSON.stringify({ url: "http://127.0.0.1:9", pid: process.pid, startedAt: Date.now() }), { mode: 0o600 });
  // Not even its owner's while the command runs.
  chmodSync(dir, 0o000);
  return dir;
}

async function berthAsOther(args: string[]): Promise<{ stderr: string; code: number }> {
  const [command, ...rest] = [...AS_OTHER_USER, process.execPath, cliMain, ...args];
  try {
    const { stderr } = await run(command!, rest, { env: { ...process.env, HOME: tmpdir(), XDG_CONFIG_HOME: join(tmpdir(), "berth-no-config") } });
    return { stderr, code: 0 };
  } catch (error) {
    const failed = error as { stderr: string; code: number };
    return { stderr: failed.stderr, code: failed.code };
  }
}

describe("another user's data directory", () => {
  it("berth token and berth status say permission denied in one line naming the path, exit code 1, no stack trace", async () => {
    const dataDir = othersDataDir();
    const token = await berthAsOther(["token", "--data-dir", dataDir]);
    expect(token).toEqual({
      code: 1,
      stderr: `berth token: permission denied on ${dataDir}/token: this user may not use it (another user's data directory?); run berth as its owner, or pass --data-dir\n`,
    });
    // Not "no host running": the host file is there, and this user may not read it.
    for (const args of [["status"], ["token", "--link"]]) {
      const denied = await berthAsOther([...args, "--data-dir", dataDir]);
      expect(denied).toEqual({
        code: 1,
        stderr: `berth ${args[0]}: permission denied on ${dataDir}/host.json: this user may not use it (another user's data directory?); run berth as its owner, or pass --data-dir\n`,
      });
    }
  });
});
