import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { acquireHostLock, HostLockBusyError } from "../../src/server/host-lock.js";
import { BerthProcess } from "../server/serve-process.js";

/**
 * Issue 9 item 3: the running-host check and host.json were not atomic; in 2 of 5 simultaneous
 * starts both hosts served one data directory. Now an exclusive lock on `host.lock`, taken
 * before anything else and dropped by the kernel when the holder dies, decides.
 */

const temps: string[] = [];
const started: BerthProcess[] = [];

afterEach(() => {
  for (const berth of started.splice(0)) berth.killGroup();
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "berth-single-")));
  temps.push(dir);
  return dir;
}

function serve(dir: string): BerthProcess {
  const berth = new BerthProcess(["serve", "--port", "0", "--data-dir", dir], { XDG_CONFIG_HOME: dir });
  started.push(berth);
  return berth;
}

describe("one host per data directory", () => {
  it("of 5 simultaneous starts on one data directory, exactly one serves (3 rounds)", async () => {
    for (let round = 0; round < 3; round++) {
      const dir = dataDir();
      const contenders = Array.from({ length: 5 }, () => serve(dir));
      // Each either prints its start-up line or exits; wait for all five to decide.
      const outcomes = await Promise.all(
        contenders.map((berth) => Promise.race([berth.startupLine().then(() => "serving" as const), berth.exited.then(() => "refused" as const)])),
      );
      expect(outcomes.filter((outcome) => outcome === "serving")).toHaveLength(1);
      const winner = contenders[outcomes.indexOf("serving")]!;
      for (const loser of contenders.filter((berth) => berth !== winner)) {
        expect(await loser.exited).toEqual({ code: 1, signal: null });
        expect(loser.stderr).toContain(`Berth is already running on ${dir}`);
      }
      winner.signal("SIGTERM");
      expect(await winner.exited).toEqual({ code: 0, signal: null });
    }
  });

  it("the lock dies with its holder: after a SIGKILL the next start serves at once", async () => {
    const dir = dataDir();
    const first = serve(dir);
    await first.startupLine();
    first.signal("SIGKILL");
    await first.exited;
    const second = serve(dir);
    await second.startupLine();
    second.signal("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });

  it("inside one process too: a second acquisition is refused until the first is released", () => {
    const path = join(dataDir(), "host.lock");
    const lock = acquireHostLock(path);
    expect(() => acquireHostLock(path)).toThrow(HostLockBusyError);
    lock.release();
    lock.release();
    acquireHostLock(path).release();
  });
});
