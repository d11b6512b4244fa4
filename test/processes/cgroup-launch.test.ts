import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { InMemoryProcessGroupLedger } from "../../src/processes/ledger.js";
import { attachScope, ProcessScope } from "../../src/processes/scope.js";
import { spawnGroup, type SpawnedGroup, type SpawnGroupOptions } from "../../src/processes/spawn-group.js";
import { cgroupsAvailable, NO_CGROUPS } from "../support/cgroups.js";
import { killLeftovers, startedProcess, type StartedProcess } from "../support/process-table.js";

/**
 * A child tracked by a cgroup is started through a launcher that moves it into its cgroup
 * before its command runs. The command must not notice: same arguments, same environment (not
 * a variable added, renamed or dropped), same working directory, same exit status, and the
 * same error when it cannot start.
 */

const dir = realpathSync(mkdtempSync(join(tmpdir(), "berth-launch-")));
const scope = ProcessScope.forDataDir(dir, { cgroups: true });
const ledger = new InMemoryProcessGroupLedger();
attachScope(ledger, scope);
const groups: SpawnedGroup[] = [];
const started: StartedProcess[] = [];

afterEach(async () => {
  await Promise.all(groups.splice(0).map((group) => group.stop()));
  killLeftovers(started.splice(0));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a command to its end; its standard output and how it ended. */
async function run(options: Omit<SpawnGroupOptions, "kind" | "ledger">) {
  const group = await spawnGroup({ ...options, kind: "terminal", ledger, stop: { graceMs: 2_000 } });
  groups.push(group);
  started.push(startedProcess(group.entry.pgid));
  let out = "";
  group.child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const status = await group.exited;
  await group.outputClosed;
  return { group, out, status };
}

describe("a child started through the cgroup launcher", () => {
  // Probed by the first test, not while the file loads: Stryker would otherwise run the probe's mutants against every test.
  beforeEach(({ skip }) => skip(!cgroupsAvailable(scope.tracking.mode === "cgroup"), NO_CGROUPS));

  it("runs in its own cgroup from its first instruction", async () => {
    const { group, out } = await run({ command: "cat", args: ["/proc/self/cgroup"] });
    expect(group.tag.cgroup).toBeDefined();
    expect(out).toMatch(new RegExp(`^0::.*/berth-${scope.key}/${basename(group.tag.cgroup!)}$`, "m"));
  });

  it("gets exactly its arguments, environment and working directory", async () => {
    const env = { PATH: process.env.PATH, "a.b": "dots", "my-var": "dash", "BASH_FUNC_f%%": "() { :; }", EMPTY: "", SPACES: " x  y " };
    const args = ["-0"];
    const { out } = await run({ command: "env", args, env, cwd: dir });
    const seen = Object.fromEntries(
      out
        .split("\0")
        .filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
    );
    // The marker is added; nothing else, and no PWD a shell would have set.
    expect(seen).toEqual({ ...env, BERTH_GROUP: expect.stringMatching(new RegExp(`^${scope.key}\\.[0-9a-f]{12}$`)) });

    const printed = await run({
      command: "sh",
      args: ["-c", 'printf "%s|" "$0" "$@"; pwd -P', "zero", "one two", "", "*"],
      cwd: dir,
      env: { PATH: process.env.PATH, PWD: "/given" },
    });
    expect(printed.out).toBe(`zero|one two||*|${dir}\n`);
  });

  it("passes on its exit status and its signal", async () => {
    expect((await run({ command: "sh", args: ["-c", "exit 7"] })).status).toEqual({ exitCode: 7, signal: null });
    expect((await run({ command: "sh", args: ["-c", "kill -TERM $$"] })).status).toEqual({ exitCode: null, signal: "SIGTERM" });
  });

  it("names a command that is missing or not executable, as a direct start would", async () => {
    await expect(spawnGroup({ command: "berth-no-such-command", kind: "terminal", ledger })).rejects.toThrow(
      'cannot start command "berth-no-such-command": no such command (ENOENT)',
    );
    const bin = join(dir, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "tool"), "#!/bin/sh\necho tool ran\n");
    chmodSync(join(bin, "tool"), 0o644);
    await expect(spawnGroup({ command: "tool", env: { PATH: bin }, kind: "terminal", ledger })).rejects.toThrow(
      'cannot start command "tool": not executable (EACCES)',
    );
    // The cgroups made for them are gone, and with them the scope's directory (no other child runs).
    expect(existsSync(scope.cgroupDirectory!)).toBe(false);
    // Found on the child's PATH, not the host's, once it may run.
    chmodSync(join(bin, "tool"), 0o755);
    expect((await run({ command: "tool", env: { PATH: bin } })).out).toBe("tool ran\n");
    expect((await run({ command: "./bin/tool", cwd: dir })).out).toBe("tool ran\n");
  });

  it("falls back to the marker alone for a command env(1) cannot carry", async () => {
    const odd = join(dir, "a=b");
    writeFileSync(odd, "#!/bin/sh\necho odd ran\n", { mode: 0o755 });
    const { group, out } = await run({ command: odd });
    expect(out).toBe("odd ran\n");
    expect(group.tag.cgroup).toBeUndefined();
  });
});
