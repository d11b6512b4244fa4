import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  cgroupMembers,
  cgroupPopulated,
  createCgroup,
  deleteCgroup,
  ensureCgroup,
  killCgroup,
  launchInCgroup,
  probeCgroups,
  probeCgroupsAsync,
  subCgroups,
} from "../../src/processes/cgroup.js";
import { ProcessScope } from "../../src/processes/scope.js";
import { cgroupsAvailable, NO_CGROUPS } from "../support/cgroups.js";
import { killLeftovers, processIsRunning, startedProcess, waitUntil, type StartedProcess } from "../support/process-table.js";

/**
 * The cgroup v2 helpers, on the machine's own hierarchy where the host may create cgroups (root, or a delegated
 * unit), and on plain directories where a cgroup file system is not needed to tell the outcome.
 */

const temp = realpathSync(mkdtempSync(join(tmpdir(), "berth-cgroup-")));
const started: StartedProcess[] = [];
const madeCgroups: string[] = [];

/**
 * Where a test's cgroups go: the scope directory a host on `temp` would use, probed inside the test that needs it (a
 * probe while the file loads would run outside every test, and Stryker would run its mutants against every test).
 */
function scopeDirectory(): string | undefined {
  const tracking = ProcessScope.forDataDir(temp).tracking;
  if (tracking.mode !== "cgroup") return undefined;
  madeCgroups.push(tracking.directory);
  return tracking.directory;
}

afterEach(() => {
  killLeftovers(started.splice(0));
  for (const dir of madeCgroups.splice(0)) {
    killCgroup(dir);
    deleteCgroup(dir);
  }
});

afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** A `sleep` started inside `cgroup` by the launcher, once it runs there. */
async function sleeperIn(cgroup: string): Promise<number> {
  const launch = launchInCgroup(cgroup, { command: "sleep", args: ["3600"], env: { PATH: process.env.PATH } })!;
  const child = spawn(launch.command, launch.args, { env: launch.env, stdio: "ignore" });
  started.push(startedProcess(child.pid!));
  await waitUntil(() => cgroupMembers(cgroup).includes(child.pid!), "the sleep runs in its cgroup");
  return child.pid!;
}

describe("probeCgroups", () => {
  it("says why not when no hierarchy holds the process, when the directory cannot be made, or when it is no cgroup", () => {
    expect(probeCgroups("berth-x", "")).toEqual({ reason: "no cgroup v2 hierarchy holds this process" });
    const missing = join(temp, "missing");
    expect(probeCgroups("berth-x", missing)).toEqual({ reason: `cannot create ${join(missing, "berth-x")} (ENOENT)` });
    expect(probeCgroups("berth-x", temp)).toEqual({ reason: `${join(temp, "berth-x")} has no cgroup.kill (Linux before 5.14)` });
    // The directory it made to look is gone again.
    expect(existsSync(join(temp, "berth-x"))).toBe(false);
  });

  it("says so when it cannot make a cgroup under the scope's directory, and leaves that directory as it found it", () => {
    const dir = join(temp, "berth-y");
    mkdirSync(join(dir, `probe-${process.pid}`), { recursive: true });
    writeFileSync(join(dir, "cgroup.kill"), "");
    expect(probeCgroups("berth-y", temp)).toEqual({ reason: `cannot create a cgroup under ${dir}` });
    expect(existsSync(join(dir, `probe-${process.pid}`))).toBe(true);
  });

  it("finds the hierarchy the host is in, and leaves no directory behind", ({ skip }) => {
    const scopeDir = scopeDirectory();
    skip(!cgroupsAvailable(scopeDir !== undefined), NO_CGROUPS);
    // The host's own cgroup, as the kernel names it, under the mount of the hierarchy's root.
    const own = /^0::(\/.*)$/m.exec(readFileSync("/proc/self/cgroup", "utf8"))![1]!;
    expect(scopeDir!.endsWith(join(own, `berth-${ProcessScope.forDataDir(temp).key}`))).toBe(true);
    expect(existsSync(join(scopeDir!, "..", "cgroup.procs"))).toBe(true);
    expect(existsSync(scopeDir!)).toBe(false);
  });

  it("without blocking, answers as the blocking probe does and leaves no directory behind", async () => {
    expect(await probeCgroupsAsync("berth-x", "")).toEqual({ reason: "no cgroup v2 hierarchy holds this process" });
    expect(await probeCgroupsAsync("berth-x", temp)).toEqual({ reason: `${join(temp, "berth-x")} has no cgroup.kill (Linux before 5.14)` });
    expect(existsSync(join(temp, "berth-x"))).toBe(false);
    const name = `berth-async-${process.pid}`;
    const answer = await probeCgroupsAsync(name);
    expect(answer).toEqual(probeCgroups(name));
    if ("directory" in answer) expect(existsSync(answer.directory)).toBe(false);
  });
});

describe("ProcessScope.probe", () => {
  it("finds out the tracking without blocking, once, and the tracking then reads the same without probing again", async () => {
    const scope = ProcessScope.forDataDir(temp);
    const probing = scope.probe();
    // Read while the probe runs, the tracking would start a second probe of the same cgroup: refused loudly.
    expect(() => scope.tracking).toThrow("the scope's tracking was read while its probe still ran");
    const tracking = await probing;
    if (tracking.mode === "cgroup") madeCgroups.push(tracking.directory);
    expect(tracking).toEqual(ProcessScope.forDataDir(temp).tracking);
    expect(scope.tracking).toBe(tracking);
    expect(await scope.probe()).toBe(tracking);
  });

  it("says the marker alone when cgroups are turned off, with no probe", async () => {
    expect(await ProcessScope.forDataDir(temp, { cgroups: false }).probe()).toEqual({ mode: "marker", reason: "turned off (BERTH_CGROUPS=off)" });
  });
});

describe("ensureCgroup and createCgroup", () => {
  it("make a directory, accept one that exists (ensure only) and name what stopped them", () => {
    const dir = join(temp, "made");
    expect(ensureCgroup(dir)).toBe(true);
    expect(existsSync(dir)).toBe(true);
    expect(ensureCgroup(dir)).toBe(true);
    expect(ensureCgroup(join(temp, "no", "such"))).toBe("ENOENT");
    expect(createCgroup(dir, "g-1")).toBe(join(dir, "g-1"));
    expect(existsSync(join(dir, "g-1"))).toBe(true);
    expect(createCgroup(dir, "g-1")).toBeUndefined();
  });
});

describe("subCgroups and deleteCgroup", () => {
  it("list the directories below, and remove empty ones from the bottom up", () => {
    const dir = join(temp, "tree");
    mkdirSync(join(dir, "a", "b"), { recursive: true });
    mkdirSync(join(dir, "c"));
    writeFileSync(join(dir, "file"), "");
    expect(subCgroups(dir).sort()).toEqual([join(dir, "a"), join(dir, "c")]);
    expect(subCgroups(join(temp, "none"))).toEqual([]);
    expect(deleteCgroup(join(dir, "a"))).toBe(true);
    expect(existsSync(join(dir, "a"))).toBe(false);
    // A directory that is not empty stays, a missing one counts as deleted.
    expect(deleteCgroup(dir)).toBe(false);
    expect(existsSync(join(dir, "c"))).toBe(false);
    expect(deleteCgroup(join(temp, "none"))).toBe(true);
  });
});

describe("launchInCgroup", () => {
  it("cannot carry a command with = or a variable without a name", () => {
    expect(launchInCgroup("/cg", { command: "a=b", args: [], env: {} })).toBeUndefined();
    expect(launchInCgroup("/cg", { command: "true", args: [], env: { "": "x" } })).toBeUndefined();
  });

  it("runs the command anyway when the move fails, and says so", () => {
    const launch = launchInCgroup(join(temp, "gone"), {
      command: "sh",
      args: ["-c", 'echo "$A"; printenv B || echo no B'],
      env: { A: "a", B: undefined },
    })!;
    const ran = spawnSync(launch.command, launch.args, { env: launch.env, encoding: "utf8" });
    expect(ran.stdout).toBe("a\nno B\n");
    expect(ran.stderr).toMatch(
      new RegExp(`^berth: process \\d+ could not enter the cgroup ${join(temp, "gone", "cgroup.procs")}; only its BERTH_GROUP marker tracks it\\n$`),
    );
    expect(ran.status).toBe(0);
  });
});

describe("a cgroup's members", () => {
  it("are listed, the cgroups below included, and are populated until they are gone", async ({ skip }) => {
    const scopeDir = scopeDirectory();
    skip(!cgroupsAvailable(scopeDir !== undefined), NO_CGROUPS);
    expect(ensureCgroup(scopeDir!)).toBe(true);
    const group = createCgroup(scopeDir!, "g-members")!;
    const below = createCgroup(group, "inner")!;
    expect(cgroupMembers(group)).toEqual([]);
    expect(cgroupPopulated(group)).toBe(false);
    const first = await sleeperIn(group);
    const second = await sleeperIn(below);
    expect(cgroupMembers(group).sort()).toEqual([first, second].sort());
    expect(cgroupPopulated(group)).toBe(true);
    // One kill ends them all, and a populated cgroup is not removed.
    expect(deleteCgroup(group)).toBe(false);
    killCgroup(group);
    await waitUntil(() => !processIsRunning(first) && !processIsRunning(second), "both sleeps were killed");
    await waitUntil(() => !cgroupPopulated(group), "the cgroup is empty");
    expect(deleteCgroup(group)).toBe(true);
    expect(cgroupMembers(group)).toEqual([]);
    expect(cgroupPopulated(group)).toBe(false);
  });
});

describe("killCgroup", () => {
  it("does nothing for a cgroup that is gone, and lets any other failure through", () => {
    killCgroup(join(temp, "gone"));
    const file = join(temp, "a-file");
    writeFileSync(file, "");
    expect(() => killCgroup(file)).toThrow(/ENOTDIR/);
  });
});
