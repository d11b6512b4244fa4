import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { groupIsAlive, signalGroup } from "../../src/processes/group-signals.js";
import { ownLineage, scanMarked } from "../../src/processes/marker.js";
import { isRunning } from "../../src/processes/proc-stat.js";
import { spawnGroup, type SpawnedGroup } from "../../src/processes/spawn-group.js";
import { stopGroup } from "../../src/processes/stop-group.js";
import { killLeftovers, processIsRunning, startedProcess, waitUntil, type StartedProcess } from "../support/process-table.js";

const started: StartedProcess[] = [];

afterEach(() => {
  vi.restoreAllMocks();
  killLeftovers(started.splice(0));
});

/**
 * A shell leading its own group, with one more member: the pid of a background `sleep` it printed. Its stop waits
 * `graceMs` before it kills: short where a kill is expected, long where the tree must leave on SIGTERM (the wait ends
 * as soon as it has left; on a loaded machine that can take longer than 200 ms).
 */
async function groupWithMember(script = "sleep 3600 >/dev/null & echo $!; wait", graceMs = 200): Promise<{ group: SpawnedGroup; member: number }> {
  const group = await spawnGroup({ command: "sh", args: ["-c", script], kind: "service", stop: { graceMs } });
  started.push(startedProcess(group.entry.pgid));
  let text = "";
  group.child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  await waitUntil(() => text.includes("\n"), "the shell printed its member's pid");
  const member = Number(text.trim().split("\n").at(-1));
  started.push(startedProcess(member));
  return { group, member };
}

/** An error as `process.kill` throws it. */
function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`kill ${code}`), { code });
}

/** `process.kill` as the kernel would answer `code` to calls with this target; every other call goes through. */
function refuseKill(target: number, code: string): void {
  const kill = process.kill.bind(process);
  vi.spyOn(process, "kill").mockImplementation((pid: number, signal?: string | number) => {
    if (pid === target) throw errno(code);
    return kill(pid, signal);
  });
}

/** A shell and its background member, both ignoring SIGTERM (the sleep inherits the disposition). */
const IGNORING_TERM = "trap '' TERM; sleep 3600 >/dev/null & echo $!; wait; wait";

const neverAllocated = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8")) + 1;

describe("signalGroup", () => {
  it("signals every member of the group, not only its leader, and says it sent", async () => {
    const { group, member } = await groupWithMember();
    expect(signalGroup(group.entry.pgid, "SIGKILL")).toBe("sent");
    await waitUntil(() => !processIsRunning(member), "the member died with its group");
  });

  it("says gone for a group that does not exist", () => {
    expect(signalGroup(neverAllocated, "SIGTERM")).toBe("gone");
  });

  it("names the signal and the group when the kernel refuses", async () => {
    const { group } = await groupWithMember();
    refuseKill(-group.entry.pgid, "EPERM");
    let thrown: Error | undefined;
    try {
      signalGroup(group.entry.pgid, "SIGTERM");
    } catch (error) {
      thrown = error as Error;
    }
    expect(thrown?.message).toBe(`cannot send SIGTERM to process group ${group.entry.pgid}: kill EPERM`);
    expect(((thrown as Error).cause as NodeJS.ErrnoException).code).toBe("EPERM");
  });
});

describe("groupIsAlive", () => {
  it("counts a group it may not signal (EPERM) as present and reads its members", async () => {
    const { group } = await groupWithMember();
    refuseKill(-group.entry.pgid, "EPERM");
    expect(groupIsAlive(group.entry.pgid)).toBe(true);
  });

  it("lets any other failure of the probe through", async () => {
    const { group } = await groupWithMember();
    refuseKill(-group.entry.pgid, "EINVAL");
    expect(() => groupIsAlive(group.entry.pgid)).toThrow("kill EINVAL");
  });

  it("is false for a group that does not exist", () => {
    expect(groupIsAlive(neverAllocated)).toBe(false);
  });
});

describe("stopping a tree", () => {
  it("stops a member that left the group (setsid), found by its marker", async () => {
    // The daemon keeps the marker its group was started with, in its own session.
    const { group, member } = await groupWithMember("setsid sleep 3600 >/dev/null 2>&1 & echo $!; wait", 30_000);
    await waitUntil(() => processIsRunning(member), "the daemon runs");
    expect(await group.stop()).toBe("exited");
    expect(processIsRunning(member)).toBe(false);
  });

  it("kills a member that left the group and ignores SIGTERM", async () => {
    const { group, member } = await groupWithMember("trap '' TERM; setsid sleep 3600 >/dev/null 2>&1 & echo $!; wait; wait");
    await waitUntil(() => processIsRunning(member), "the daemon runs");
    // The whole tree: the group, and what carries its marker.
    expect(await group.stop()).toBe("killed");
    expect(processIsRunning(member)).toBe(false);
  });

  it("waits the grace it is given, not the default, before it kills", async () => {
    // The shell would leave on its own one second after SIGTERM: within the default grace, not within 200 ms.
    const { group } = await groupWithMember("trap 'sleep 1; exit 0' TERM; echo $$; while :; do sleep 0.05; done");
    expect(await stopGroup(group.entry.pgid, { graceMs: 200 })).toBe("killed");
  });

  for (const code of ["EPERM", "ESRCH"]) {
    it(`goes on when signalling a member fails with ${code} (not ours, gone meanwhile), and stops the group`, async () => {
      // Both ignore SIGTERM, so the member still runs when it is signalled on its own.
      const { group, member } = await groupWithMember(IGNORING_TERM);
      refuseKill(member, code);
      expect(await stopGroup(group.entry.pgid, { graceMs: 200 })).toBe("killed");
      vi.restoreAllMocks();
      expect(processIsRunning(member)).toBe(false);
    });
  }

  it("fails, naming the error, when signalling a member fails otherwise", async () => {
    const { group, member } = await groupWithMember(IGNORING_TERM);
    refuseKill(member, "EINVAL");
    await expect(stopGroup(group.entry.pgid, { graceMs: 200 })).rejects.toThrow("kill EINVAL");
  });
});

describe("isRunning", () => {
  it("counts a zombie and a dead process as not running, any other state as running", () => {
    const stat = (state: string) => ({ pid: 2, state, pgid: 2, startTicks: 1 });
    expect(isRunning(stat("Z"))).toBe(false);
    expect(isRunning(stat("X"))).toBe(false);
    expect(isRunning(undefined)).toBe(false);
    for (const state of ["R", "S", "D", "T"]) expect(isRunning(stat(state))).toBe(true);
  });
});

describe("scanMarked", () => {
  it("matches one group's marker exactly, or every marker of a scope by its prefix", async () => {
    const scope = `t${process.pid}x${Date.now()}`;
    const spawnMarked = (marker: string) => {
      const child = spawn("sleep", ["3600"], { env: { ...process.env, BERTH_GROUP: marker }, stdio: "ignore", detached: true });
      started.push(startedProcess(child.pid!));
      return child.pid!;
    };
    const short = spawnMarked(`${scope}.ab`);
    const long = spawnMarked(`${scope}.abc`);
    // An unmarked process, so the scan is seen to read more than the matches even where the machine runs little else (CI)
    const unmarked = spawn("sleep", ["3600"], { stdio: "ignore", detached: true });
    started.push(startedProcess(unmarked.pid!));
    const pids = (scan: ReturnType<typeof scanMarked>) => scan.matches.map((stat) => stat.pid).sort();
    await waitUntil(() => pids(scanMarked({ prefix: `${scope}.` })).length === 2, "both sleeps carry their markers");
    expect(pids(scanMarked({ prefix: `${scope}.` }))).toEqual([short, long].sort());
    const exact = scanMarked({ exact: `${scope}.ab` });
    expect(pids(exact)).toEqual([short]);
    expect(exact.scanned).toBeGreaterThan(2);
    expect(scanMarked({ exact: `${scope}.a` }).matches).toEqual([]);
  });

  it("says how long it took", () => {
    const before = performance.now();
    const scan = scanMarked({ exact: `t${process.pid}.none` });
    const took = performance.now() - before;
    expect(scan.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(scan.elapsedMs).toBeLessThanOrEqual(took);
  });

  it("spares this process and every ancestor below init, as their stat lines tell them", () => {
    // The parent's pid is the stat line's fourth field, the second after the command name.
    const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").at(-1)!.split(" ")[1]);
    const expected = [process.pid];
    for (let pid = process.ppid; pid > 1; pid = parentOf(pid)) expected.push(pid);
    expect([...ownLineage()].sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
  });
});
