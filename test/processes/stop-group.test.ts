import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { assertSignalableGroup, groupIsAlive } from "../../src/processes/group-signals.js";
import { readProcStat } from "../../src/processes/proc-stat.js";
import { spawnGroup, type SpawnedGroup } from "../../src/processes/spawn-group.js";
import { stopGroup } from "../../src/processes/stop-group.js";
import { groupMembers, killLeftovers, processIsRunning, startedProcess, waitUntil, type StartedProcess } from "../support/process-table.js";

const started: StartedProcess[] = [];

/**
 * Starts `sh -c script` in its own group, waits for the first `lines` lines it
 * prints (pids of processes it started) and returns the group's running members.
 */
async function startShell(script: string, lines: number): Promise<{ group: SpawnedGroup; members: StartedProcess[] }> {
  const group = await spawnGroup({ command: "sh", args: ["-c", script], kind: "service" });
  started.push(startedProcess(group.entry.pgid));
  let text = "";
  group.child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  await waitUntil(() => text.split("\n").length > lines, `the shell printed ${lines} line(s)`);
  const printed = text.split("\n").slice(0, lines).map(Number);
  const members = groupMembers(group.entry.pgid);
  started.push(...members);
  expect(members.map(({ pid }) => pid)).toEqual(expect.arrayContaining([group.entry.pgid, ...printed]));
  return { group, members };
}

afterEach(() => {
  killLeftovers(started.splice(0));
});

describe("stopGroup", () => {
  it("stops the leader and its grandchildren with the polite signal", async () => {
    const { group, members } = await startShell("sleep 3600 & echo $!; sleep 3600 & echo $!; wait", 2);
    const pgid = group.entry.pgid;
    expect(members).toHaveLength(3);

    expect(await stopGroup(pgid, { graceMs: 5_000 })).toBe("exited");

    expect(groupIsAlive(pgid)).toBe(false);
    for (const { pid } of members) expect(processIsRunning(pid)).toBe(false);
    expect(await group.exited).toEqual({ exitCode: null, signal: "SIGTERM" });
  });

  it("kills a group whose leader ignores SIGTERM after the bounded wait", async () => {
    // The shell ignores TERM and so does the sleep it starts, which inherits the disposition.
    const { group, members } = await startShell("trap '' TERM; sleep 3600 & echo $!; wait; wait", 1);
    const pgid = group.entry.pgid;

    expect(await stopGroup(pgid, { graceMs: 200 })).toBe("killed");

    for (const { pid } of members) expect(processIsRunning(pid)).toBe(false);
    expect(await group.exited).toEqual({ exitCode: null, signal: "SIGKILL" });
  });

  it("makes a second concurrent stop of the same group await the first", async () => {
    const { group } = await startShell("trap '' TERM; echo $$; while :; do sleep 1; done", 1);
    const pgid = group.entry.pgid;

    const first = stopGroup(pgid, { graceMs: 200 });
    const second = stopGroup(pgid, { graceMs: 200 });

    expect(second).toBe(first);
    expect(await second).toBe("killed");
    expect(processIsRunning(pgid)).toBe(false);
  });

  it("reports a group that is already gone without signalling anything", async () => {
    // No pid reaches pid_max, so this group cannot exist and cannot be someone else's.
    const neverAllocated = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8")) + 1;
    expect(await stopGroup(neverAllocated)).toBe("already-gone");
  });

  it("refuses group ids that would signal more than one group or the host itself", () => {
    for (const pgid of [0, 1, -1, -42, 2.5, Number.NaN]) {
      expect(() => assertSignalableGroup(pgid)).toThrow(/refusing to signal process group/);
    }
    // In a PID namespace entered below its group's leader (the mutation run's `unshare`), the host's group lies outside
    // and reads as 0, which the first check refuses already.
    const own = readProcStat(process.pid)!.pgid;
    const reason = own === 0 ? "not a process group id of a child" : "it is the host's own process group";
    expect(() => assertSignalableGroup(own)).toThrow(`refusing to signal process group ${own}: ${reason}`);
  });
});
