import { afterEach, describe, expect, it, vi } from "vitest";
import { groupIsAlive } from "../../src/processes/group-signals.js";
import { spawnGroup } from "../../src/processes/spawn-group.js";
import { killLeftovers, processIsRunning, startedProcess, waitUntil, type StartedProcess } from "../support/process-table.js";

/** Counts full reads of the process table (`readdirSync("/proc")`) made by the code under test. */
const tableReads = vi.hoisted(() => ({ count: 0 }));
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const readdirSync = ((path: unknown, ...rest: unknown[]) => {
    if (path === "/proc") tableReads.count++;
    return (fs.readdirSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readdirSync;
  return { ...fs, default: { ...fs, readdirSync }, readdirSync };
});

const started: StartedProcess[] = [];
afterEach(() => killLeftovers(started.splice(0)));

describe("groupIsAlive polled while a group stops", () => {
  it("does not read the whole process table while the leader runs", async () => {
    const group = await spawnGroup({ command: "sleep", args: ["3600"], kind: "service" });
    started.push(startedProcess(group.entry.pgid));
    tableReads.count = 0;
    for (let poll = 0; poll < 100; poll++) expect(groupIsAlive(group.entry.pgid)).toBe(true);
    expect(tableReads.count).toBe(0);
  });

  it("reads it at most once, not per poll, while only a member the leader left behind runs; then sees the group gone", async () => {
    const group = await spawnGroup({ command: "sh", args: ["-c", "sleep 3600 >/dev/null & echo $!"], kind: "service" });
    const pgid = group.entry.pgid;
    started.push(startedProcess(pgid));
    let text = "";
    group.child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
    await waitUntil(() => text.includes("\n"), "the shell printed the sleep's pid");
    const sleeper = Number(text.trim());
    started.push(startedProcess(sleeper));
    await waitUntil(() => !processIsRunning(pgid), "the leader exited");

    tableReads.count = 0;
    for (let poll = 0; poll < 100; poll++) expect(groupIsAlive(pgid)).toBe(true);
    expect(tableReads.count).toBeLessThanOrEqual(1);

    process.kill(sleeper, "SIGKILL");
    await waitUntil(() => !groupIsAlive(pgid), "the group is gone");
  });
});
