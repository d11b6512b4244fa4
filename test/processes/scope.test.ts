import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { cgroupMembers, deleteCgroup, killCgroup, launchInCgroup, subCgroups } from "../../src/processes/cgroup.js";
import { InMemoryProcessGroupLedger } from "../../src/processes/ledger.js";
import { attachScope, ProcessScope, scopeOf } from "../../src/processes/scope.js";
import { stopTree } from "../../src/processes/stop-group.js";
import { cgroupsAvailable, NO_CGROUPS } from "../support/cgroups.js";
import { killLeftovers, processIsRunning, readCmdline, startedProcess, waitUntil, type StartedProcess } from "../support/process-table.js";

/** A process scope: its key, its tracking, the trees it tags and the leftovers it reaps. */

const temp = realpathSync(mkdtempSync(join(tmpdir(), "berth-scope-")));
const started: StartedProcess[] = [];
const scopes: ProcessScope[] = [];

/** Whether the host may create cgroups here; asked inside each test (see cgroup.test.ts's `scopeDirectory`). */
function cgroupsHere(): boolean {
  return cgroupsAvailable(freshScope("probe").tracking.mode === "cgroup");
}

/** A fresh scope on a directory of its own, with cgroups where the host may create them. */
function freshScope(name: string, options?: { cgroups?: boolean }): ProcessScope {
  const scope = ProcessScope.forDataDir(join(temp, name), options);
  scopes.push(scope);
  return scope;
}

afterEach(() => {
  killLeftovers(started.splice(0));
  for (const scope of scopes.splice(0)) {
    const dir = scope.tracking.mode === "cgroup" ? scope.tracking.directory : undefined;
    if (dir) {
      killCgroup(dir);
      deleteCgroup(dir);
    }
  }
});

afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Starts `sleep` with this environment, optionally inside `cgroup`, ignoring SIGTERM if asked; its pid once it runs. */
async function sleeper(env: NodeJS.ProcessEnv, { cgroup, ignoreTerm = false }: { cgroup?: string; ignoreTerm?: boolean } = {}): Promise<number> {
  const script = ignoreTerm ? "trap '' TERM; exec sleep 3600" : "exec sleep 3600";
  const direct = { command: "sh", args: ["-c", script], env: { PATH: process.env.PATH, ...env } };
  const launch = cgroup ? launchInCgroup(cgroup, direct)! : direct;
  const child = spawn(launch.command, launch.args, { env: launch.env, stdio: "ignore", detached: true });
  started.push(startedProcess(child.pid!));
  // Once it is `sleep`, its shell has set the trap, and the launcher has moved it.
  await waitUntil(() => readCmdline(child.pid!).startsWith("sleep\0"), "the sleep runs");
  if (cgroup) expect(cgroupMembers(cgroup)).toContain(child.pid);
  return child.pid!;
}

describe("ProcessScope.forDataDir", () => {
  it("keys a scope by the real path of its directory, or the path itself while it does not exist", () => {
    const real = join(temp, "data");
    const sha = (path: string) => createHash("sha256").update(path).digest("hex").slice(0, 12);
    expect(ProcessScope.forDataDir(real).key).toBe(sha(real));
    symlinkSync(temp, join(temp, "link"));
    expect(ProcessScope.forDataDir(join(temp, "link")).key).toBe(sha(temp));
  });

  it("uses the marker alone when cgroups are turned off, by option or by BERTH_CGROUPS=off", () => {
    const usable = cgroupsHere();
    const off = { mode: "marker", reason: "turned off (BERTH_CGROUPS=off)" };
    expect(freshScope("off", { cgroups: false }).tracking).toEqual(off);
    const before = process.env.BERTH_CGROUPS;
    process.env.BERTH_CGROUPS = "off";
    try {
      expect(freshScope("env-off").tracking).toEqual(off);
      if (usable) expect(freshScope("env-off-but-asked", { cgroups: true }).tracking.mode).toBe("cgroup");
    } finally {
      if (before === undefined) delete process.env.BERTH_CGROUPS;
      else process.env.BERTH_CGROUPS = before;
    }
    if (usable) expect(freshScope("default").tracking.mode).toBe("cgroup");
  });
});

describe("a scope's trees", () => {
  it("are tagged with the scope's key, and a cgroup of their own where cgroups are in use", () => {
    const usable = cgroupsHere();
    const marker = freshScope("marker", { cgroups: false });
    expect(marker.cgroupDirectory).toBeUndefined();
    expect(marker.newTree()).toEqual({ marker: expect.stringMatching(new RegExp(`^${marker.key}\\.[0-9a-f]{12}$`)) });
    if (!usable) return;
    const scope = freshScope("cgroup");
    const tag = scope.newTree();
    expect(tag.cgroup).toBe(join(scope.cgroupDirectory!, `g-${tag.marker.split(".")[1]}`));
    expect(existsSync(tag.cgroup!)).toBe(true);
  });

  it("without a cgroup start as they are; a command the launcher cannot carry loses its cgroup", () => {
    const usable = cgroupsHere();
    const launch = { command: "true", args: [], env: {} };
    const plain = { marker: "k.0" };
    expect(freshScope("plain", { cgroups: false }).launch(plain, launch)).toEqual({ launch, tag: plain });
    if (!usable) return;
    const scope = freshScope("odd");
    const tag = scope.newTree();
    const carried = scope.launch(tag, launch);
    expect(carried.tag).toBe(tag);
    expect(carried.launch.command).toBe("/bin/sh");
    const odd = scope.newTree();
    expect(scope.launch(odd, { ...launch, command: "./a=b" })).toEqual({ launch: { ...launch, command: "./a=b" }, tag: { marker: odd.marker } });
    expect(existsSync(odd.cgroup!)).toBe(false);
    // The scope's directory stays while another tree's cgroup is in it, and goes with the last.
    expect(existsSync(scope.cgroupDirectory!)).toBe(true);
    scope.discard(tag);
    expect(existsSync(tag.cgroup!)).toBe(false);
    expect(existsSync(scope.cgroupDirectory!)).toBe(false);
  });
});

describe("reapAll", () => {
  it("stops every marked process of the scope and every process in its cgroups, and removes them", async () => {
    const usable = cgroupsHere();
    const scope = freshScope("reap");
    const other = freshScope("other", { cgroups: false });
    const marked = await sleeper({ BERTH_GROUP: `${scope.key}.aaaaaaaaaaaa` });
    const stranger = await sleeper({ BERTH_GROUP: `${other.key}.aaaaaaaaaaaa` });
    const tag = usable ? scope.newTree() : undefined;
    const enclosed = tag ? await sleeper({}, { cgroup: tag.cgroup!, ignoreTerm: true }) : undefined;
    // A short grace where the cgroup's sleep must be killed anyway; a long one where all leave on SIGTERM.
    const before = performance.now();
    const reaped = await scope.reapAll({ graceMs: usable ? 500 : 30_000 });
    const took = performance.now() - before;
    expect(reaped.cgroups).toBe(usable ? 1 : 0);
    // The one in the cgroup ignores SIGTERM: only the kill ends it.
    expect(reaped.outcome).toBe(usable ? "killed" : "exited");
    expect(reaped.elapsedMs).toBeGreaterThan(0);
    expect(reaped.elapsedMs).toBeLessThanOrEqual(took);
    expect(processIsRunning(marked)).toBe(false);
    if (enclosed) expect(processIsRunning(enclosed)).toBe(false);
    expect(processIsRunning(stranger)).toBe(true);
    if (usable) expect(existsSync(scope.cgroupDirectory!)).toBe(false);
    expect(await scope.reapAll()).toMatchObject({ outcome: "already-gone", cgroups: 0 });
  });
});

describe("stopping a tree through its cgroup", () => {
  beforeEach(({ skip }) => skip(!cgroupsHere(), NO_CGROUPS));

  it("ends a process found only in its cgroup, politely when it leaves, and removes the cgroup", async () => {
    const scope = freshScope("stop");
    const tag = scope.newTree();
    const pid = await sleeper({}, { cgroup: tag.cgroup! });
    expect(await stopTree({ cgroups: [tag.cgroup!] }, { graceMs: 30_000 })).toBe("exited");
    expect(processIsRunning(pid)).toBe(false);
    expect(existsSync(tag.cgroup!)).toBe(false);
    expect(await stopTree({ cgroups: [tag.cgroup!] })).toBe("already-gone");
  });

  it("kills one that ignores SIGTERM, and removes an empty cgroup it was given beside it", async () => {
    const scope = freshScope("kill");
    const busy = scope.newTree();
    const empty = scope.newTree();
    const pid = await sleeper({}, { cgroup: busy.cgroup!, ignoreTerm: true });
    expect(await stopTree({ cgroups: [busy.cgroup!, empty.cgroup!] }, { graceMs: 200 })).toBe("killed");
    expect(processIsRunning(pid)).toBe(false);
    expect(subCgroups(scope.cgroupDirectory!)).toEqual([]);
  });

  it("removes the cgroups of a tree that is gone already", async () => {
    const tag = freshScope("gone").newTree();
    expect(await stopTree({ cgroups: [tag.cgroup!] })).toBe("already-gone");
    expect(existsSync(tag.cgroup!)).toBe(false);
  });
});

describe("scopeOf", () => {
  it("is the ledger's attached scope, else one of this process, marker only", () => {
    const ledger = new InMemoryProcessGroupLedger();
    expect(scopeOf(ledger)).toBe(ProcessScope.ofThisProcess());
    expect(scopeOf(undefined)).toBe(ProcessScope.ofThisProcess());
    expect(ProcessScope.ofThisProcess().key).toBe(`p${process.pid}`);
    expect(ProcessScope.ofThisProcess().tracking.mode).toBe("marker");
    const scope = freshScope("attached");
    attachScope(ledger, scope);
    expect(scopeOf(ledger)).toBe(scope);
  });
});
