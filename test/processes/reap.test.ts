import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { InMemoryProcessGroupLedger, type LedgerEntry } from "../../src/processes/ledger.js";
import { readBootId, readProcStat } from "../../src/processes/proc-stat.js";
import { reapLeftoverGroups } from "../../src/processes/reap.js";
import { spawnGroup, type SpawnedGroup } from "../../src/processes/spawn-group.js";
import { groupMembers, killLeftovers, processIsRunning, startedProcess, waitUntil, type StartedProcess } from "../support/process-table.js";

const started: StartedProcess[] = [];
const groups: SpawnedGroup[] = [];
const neverAllocated = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8")) + 1;

afterEach(async () => {
  await Promise.all(groups.splice(0).map((group) => group.stop()));
  killLeftovers(started.splice(0));
});

function entryOf(pgid: number, overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    pgid,
    startTicks: readProcStat(pgid)?.startTicks ?? 0,
    bootId: readBootId(),
    kind: "terminal",
    label: `group ${pgid}`,
    startedAt: Date.now(),
    ...overrides,
  };
}

/**
 * Plays a previous run of the host: a process that starts a shell in its own
 * group (the shell starts a background sleep), prints both pids and dies,
 * leaving the group behind as an orphan.
 */
async function leaveGroupBehind(): Promise<{ leader: number; member: number }> {
  const script = `
    const { spawn } = require("node:child_process");
    const group = spawn("sh", ["-c", "sleep 3600 & echo $!; wait"], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
    group.stdout.once("data", (line) => {
      process.stdout.write(group.pid + " " + String(line).trim() + "\\n", () => process.exit(0));
    });`;
  const host = spawn(process.execPath, ["-e", script], { detached: true, stdio: ["ignore", "pipe", "inherit"] });
  let text = "";
  host.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
  await once(host, "close");
  const [leader, member] = text.trim().split(" ").map(Number) as [number, number];
  started.push(startedProcess(leader), startedProcess(member));
  return { leader, member };
}

async function startOwnGroup(): Promise<SpawnedGroup> {
  const group = await spawnGroup({ command: "sleep", args: ["3600"], kind: "service" });
  started.push(startedProcess(group.entry.pgid));
  groups.push(group);
  return group;
}

describe("reapLeftoverGroups", () => {
  it("stops a group a dead previous run left behind, grandchildren included, and deletes it from the ledger", async () => {
    const { leader, member } = await leaveGroupBehind();
    const members = groupMembers(leader);
    started.push(...members);
    expect(members.map(({ pid }) => pid).sort()).toEqual([leader, member].sort());
    const ledger = new InMemoryProcessGroupLedger();
    const entry = entryOf(leader);
    ledger.add(entry);

    const reaped = await reapLeftoverGroups(ledger, { graceMs: 5_000 });

    expect(reaped).toEqual([{ entry, outcome: { kind: "stopped", stop: "exited" } }]);
    for (const { pid } of members) expect(processIsRunning(pid)).toBe(false);
    expect(ledger.list()).toEqual([]);
  });

  it("stops what is left of a group whose leader already died (the kernel never reuses a live group's id)", async () => {
    const { leader, member } = await leaveGroupBehind();
    const entry = entryOf(leader);
    process.kill(leader, "SIGKILL");
    await waitUntil(() => !processIsRunning(leader), "the leader is gone");
    expect(processIsRunning(member)).toBe(true);
    const ledger = new InMemoryProcessGroupLedger();
    ledger.add(entry);

    const reaped = await reapLeftoverGroups(ledger, { graceMs: 5_000 });

    expect(reaped).toEqual([{ entry, outcome: { kind: "stopped", stop: "exited" } }]);
    expect(processIsRunning(member)).toBe(false);
  });

  it("leaves alone a live process whose start ticks or boot differ from the record, and deletes it from the ledger", async () => {
    const laterStart = await startOwnGroup();
    const otherBoot = await startOwnGroup();
    const ledger = new InMemoryProcessGroupLedger();
    const stale = [
      entryOf(laterStart.entry.pgid, { startTicks: laterStart.entry.startTicks - 1 }),
      entryOf(otherBoot.entry.pgid, { bootId: "00000000-0000-0000-0000-000000000000" }),
    ];
    for (const entry of stale) ledger.add(entry);

    const reaped = await reapLeftoverGroups(ledger, { graceMs: 200 });

    // An entry from another boot describes a group that died with that boot, whatever now runs under its pid.
    expect(reaped).toEqual([
      { entry: stale[0], outcome: { kind: "pid-reused" } },
      { entry: stale[1], outcome: { kind: "gone" } },
    ]);
    expect(processIsRunning(laterStart.entry.pgid)).toBe(true);
    expect(processIsRunning(otherBoot.entry.pgid)).toBe(true);
    expect(ledger.list()).toEqual([]);
  });

  it("just deletes from the ledger a group whose pid no longer exists", async () => {
    const ledger = new InMemoryProcessGroupLedger();
    const entry = entryOf(neverAllocated, { startTicks: 12345 });
    ledger.add(entry);

    expect(await reapLeftoverGroups(ledger)).toEqual([{ entry, outcome: { kind: "gone" } }]);
    expect(ledger.list()).toEqual([]);
  });

  it("reports a group that failed and still handles the others", async () => {
    const failing = neverAllocated;
    const ledger = new (class extends InMemoryProcessGroupLedger {
      override delete(pgid: number): void {
        super.delete(pgid);
        if (pgid === failing) throw new Error("ledger is read-only");
      }
    })();
    ledger.add(entryOf(failing, { startTicks: 1 }));
    ledger.add(entryOf(failing + 1, { startTicks: 1 }));

    const reaped = await reapLeftoverGroups(ledger);

    expect(reaped.map(({ entry, outcome }) => [entry.pgid, outcome.kind])).toEqual([
      [failing, "failed"],
      [failing + 1, "gone"],
    ]);
    expect(reaped[0]?.outcome).toMatchObject({ error: new Error("ledger is read-only") });
  });
});
