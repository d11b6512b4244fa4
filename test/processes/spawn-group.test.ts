import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InMemoryProcessGroupLedger } from "../../src/processes/ledger.js";
import { readBootId, readProcStat } from "../../src/processes/proc-stat.js";
import { describeExit, spawnGroup, type SpawnedGroup } from "../../src/processes/spawn-group.js";
import { killLeftovers, processIsRunning, startedProcess, waitUntil, type StartedProcess } from "../support/process-table.js";

const started: StartedProcess[] = [];
const groups: SpawnedGroup[] = [];

async function start(command: string, args: string[], ledger?: InMemoryProcessGroupLedger): Promise<SpawnedGroup> {
  const group = await spawnGroup({ command, args, kind: "service", ledger, stop: { graceMs: 2_000 } });
  started.push(startedProcess(group.entry.pgid));
  groups.push(group);
  return group;
}

/** Reads lines the group's leader prints, until `count` have arrived. */
async function readLines(group: SpawnedGroup, count: number): Promise<string[]> {
  let text = "";
  group.child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  await waitUntil(() => text.split("\n").length > count, `${count} line(s) were printed`);
  return text.split("\n").slice(0, count);
}

afterEach(async () => {
  await Promise.all(groups.splice(0).map((group) => group.stop()));
  killLeftovers(started.splice(0));
});

describe("spawnGroup", () => {
  it("starts the child as the leader of its own process group and identifies it", async () => {
    const group = await start("sleep", ["3600"]);
    const { pgid, startTicks, bootId } = group.entry;
    expect(pgid).toBe(group.child.pid);
    const stat = readProcStat(pgid);
    expect(stat?.pgid).toBe(pgid);
    expect(stat?.startTicks).toBe(startTicks);
    expect(bootId).toBe(readBootId());
    expect(readProcStat(process.pid)?.pgid).not.toBe(pgid);
    expect(group.entry).toMatchObject({ kind: "service", label: "sleep 3600" });
  });

  it("adds the group to the ledger on start and deletes it once stopped", async () => {
    const ledger = new InMemoryProcessGroupLedger();
    const group = await start("sleep", ["3600"], ledger);
    expect(ledger.list()).toEqual([group.entry]);
    expect(await group.stop()).toBe("exited");
    expect(ledger.list()).toEqual([]);
  });

  it("deletes from the ledger a group whose leader exited with no member left", async () => {
    const ledger = new InMemoryProcessGroupLedger();
    const group = await start("sh", ["-c", "exit 4"], ledger);
    expect(await group.exited).toEqual({ exitCode: 4, signal: null });
    expect(ledger.list()).toEqual([]);
    // Gone already: the pgid may belong to someone else by now, so it is not signalled.
    expect(await group.stop()).toBe("already-gone");
  });

  it("keeps in the ledger a group whose leader exited while a background member still runs", async () => {
    const ledger = new InMemoryProcessGroupLedger();
    const group = await start("sh", ["-c", "sleep 3600 >/dev/null & echo $!"], ledger);
    const [line] = await readLines(group, 1);
    const member = Number(line);
    started.push(startedProcess(member));
    await group.exited;
    expect(processIsRunning(member)).toBe(true);
    expect(ledger.list()).toEqual([group.entry]);

    expect(await group.stop()).toBe("exited");
    expect(processIsRunning(member)).toBe(false);
    expect(ledger.list()).toEqual([]);
  });

  it("stops the group once: a second stop awaits the first and gets the same outcome", async () => {
    const group = await start("sleep", ["3600"]);
    const first = group.stop();
    const second = group.stop();
    expect(second).toBe(first);
    expect(await first).toBe("exited");
    expect(await group.stop()).toBe("exited");
  });

  it("names a command that does not exist", async () => {
    await expect(spawnGroup({ command: "berth-no-such-command", kind: "terminal" })).rejects.toThrow(
      /cannot start command "berth-no-such-command": no such command/,
    );
  });

  it("names a working directory that does not exist or is not a directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-spawn-"));
    try {
      const missing = join(dir, "missing");
      await expect(spawnGroup({ command: "true", cwd: missing, kind: "terminal" })).rejects.toThrow(`working directory does not exist: ${missing}`);
      const file = join(dir, "file");
      writeFileSync(file, "");
      await expect(spawnGroup({ command: "true", cwd: file, kind: "terminal" })).rejects.toThrow(`working directory is not a directory: ${file}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs the command with no arguments of its own, labelled by its command line, in the directory given", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "berth-spawn-")));
    try {
      const group = await spawnGroup({ command: "pwd", cwd: dir, kind: "terminal" });
      started.push(startedProcess(group.entry.pgid));
      expect(group.entry.label).toBe("pwd");
      expect(group.child.stdin).toBeNull();
      expect(await readLines(group, 1)).toEqual([dir]);
      expect(await group.exited).toEqual({ exitCode: 0, signal: null });
      await group.outputClosed;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives the child its marker in the environment, with the environment it was given", async () => {
    const group = await spawnGroup({ command: "sh", args: ["-c", 'echo "$BERTH_GROUP $GIVEN"'], env: { GIVEN: "yes" }, kind: "terminal" });
    started.push(startedProcess(group.entry.pgid));
    expect(await readLines(group, 1)).toEqual([`${group.tag.marker} yes`]);
  });

  it("names a variable no environment can hold without quoting its value, nor keeping Node's error that does", async () => {
    const error = await spawnGroup({ command: "true", kind: "terminal", env: { ...process.env, BERTH_SECRET: "se\0cret" } }).catch(
      (failure: Error) => failure,
    );
    expect((error as Error).message).toMatch(/^cannot start command "true": .*must be a string without null bytes$/);
    expect((error as Error).message).not.toContain("cret");
    expect((error as Error).cause).toBeUndefined();
  });

  it("says why a file cannot be run, with the system's error as the cause", async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-spawn-"));
    try {
      const file = join(dir, "not-executable");
      writeFileSync(file, "#!/bin/sh\n");
      chmodSync(file, 0o644);
      const error = await spawnGroup({ command: file, kind: "terminal" }).catch((failure: Error) => failure);
      expect((error as Error).message).toBe(`cannot start command ${JSON.stringify(file)}: not executable (EACCES)`);
      expect((error as Error & { cause: NodeJS.ErrnoException }).cause.code).toBe("EACCES");
      // Thrown by spawn itself rather than emitted: named all the same.
      const below = join(file, "below");
      const thrown = await spawnGroup({ command: below, kind: "terminal" }).catch((failure: Error) => failure);
      expect((thrown as Error).message).toBe(`cannot start command ${JSON.stringify(below)}: spawn ENOTDIR`);
      expect((thrown as Error & { cause: NodeJS.ErrnoException }).cause.code).toBe("ENOTDIR");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("drains its output in bounded time even when an escaped process keeps the pipes open", async () => {
    const group = await start("sh", ["-c", "setsid sleep 3600 & echo $!"]);
    const [line] = await readLines(group, 1);
    started.push(startedProcess(Number(line)));
    await group.exited;
    // The escaped sleep holds stdout and stderr: they never close while it runs.
    await group.outputDrained();
    let closed = false;
    void group.outputClosed.then(() => (closed = true));
    await Promise.resolve();
    expect(closed).toBe(false);
  });
});

describe("describeExit", () => {
  it("names the exit code, or the signal that ended the process", () => {
    expect(describeExit({ exitCode: 3, signal: null })).toBe("exit code 3");
    expect(describeExit({ exitCode: null, signal: "SIGKILL" })).toBe("signal SIGKILL");
  });
});
