import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { InMemoryProcessGroupLedger } from "../../src/processes/ledger.js";
import { scanMarked } from "../../src/processes/marker.js";
import { readProcStat } from "../../src/processes/proc-stat.js";
import { attachScope, ProcessScope } from "../../src/processes/scope.js";
import { spawnGroup } from "../../src/processes/spawn-group.js";
import { closeAllHosts, startHost, text } from "../host/host-harness.js";
import { BerthProcess } from "../server/serve-process.js";
import { AcpTestClient } from "../server/server-harness.js";
import { killLeftovers, processIsRunning, startedProcess, waitUntil, waitUntilGone, type StartedProcess } from "../support/process-table.js";
import { cleanUp, startSecureBerth } from "./security-harness.js";

/**
 * Issue 9 item 4: a process that calls `setsid` leaves its process group, so stopping the group
 * missed it. Each test starts a double-forked, `setsid` grandchild with a closed stdin (a daemon
 * in miniature: `( setsid sh -c 'sleep 3600; : <mark>' <&- >/dev/null 2>&1 & )`) and shows it gone.
 */

const leftovers: StartedProcess[] = [];
const temps: string[] = [];
const hosts: BerthProcess[] = [];

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

/** A shell snippet that leaves a `setsid` daemon behind, findable by `mark` in its command line. */
function escapeSnippet(mark: string, { clearEnvironment = false } = {}): string {
  const env = clearEnvironment ? "env -i PATH=/usr/bin:/bin " : "";
  return `( setsid ${env}sh -c 'sleep 3600; : ${mark}' <&- >/dev/null 2>&1 & )`;
}

/**
 * The escaped daemon and its `sleep`, once both run. The daemon is picked by its exact command
 * line (`sh -c 'sleep 3600; : <mark>'`): the shells that started it carry the mark in theirs
 * too, and a terminal's shell lives on beside it.
 */
async function escapee(mark: string): Promise<number[]> {
  let daemon: number | undefined;
  await waitUntil(() => (daemon = daemonWith(mark)) !== undefined, `the escaped daemon ${mark} runs`);
  let sleeper: number | undefined;
  await waitUntil(() => (sleeper = sleepChildOf(daemon!)) !== undefined, "the daemon started its sleep");
  const pids = [daemon!, sleeper!];
  leftovers.push(...pids.map(startedProcess));
  return pids;
}

function daemonWith(mark: string): number | undefined {
  return runningPids().find((pid) => {
    const [shell, flag, script] = argv(pid);
    return shell?.endsWith("sh") === true && flag === "-c" && script === `sleep 3600; : ${mark}`;
  });
}

function sleepChildOf(parent: number): number | undefined {
  return runningPids().find((pid) => {
    try {
      // Field 4 of /proc/<pid>/stat, after the command name in parentheses.
      const ppid = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
      return ppid === parent && argv(pid)[0] === "sleep";
    } catch {
      return false;
    }
  });
}

function argv(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
}

function runningPids(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => pid !== process.pid && processIsRunning(pid));
}

function pidsWithArgument(mark: string): number[] {
  return runningPids().filter((pid) => argv(pid).some((arg) => arg.includes(mark)));
}

afterEach(async () => {
  await cleanUp();
  await closeAllHosts();
  for (const host of hosts.splice(0)) host.killGroup();
  killLeftovers(leftovers.splice(0));
});

afterAll(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// On by default wherever the host may create cgroups; this machine's answer decides which tests run.
const tracking = ProcessScope.forDataDir(tmpdir()).tracking;
const cgroupsUsable = tracking.mode === "cgroup";

describe.each([
  { mode: "marker in the environment", cgroups: false },
  { mode: "cgroup v2", cgroups: true },
])("a setsid daemon left by a stopped group is found by its $mode", ({ cgroups }) => {
  it.skipIf(cgroups && !cgroupsUsable)("is stopped with the group, even after the group's leader exited", async () => {
    const ledger = new InMemoryProcessGroupLedger();
    const scope = ProcessScope.forDataDir(tempDir("berth-scope-"), { cgroups });
    attachScope(ledger, scope);
    const mark = `escapee-${randomUUID()}`;
    const group = await spawnGroup({ command: "/bin/sh", args: ["-c", escapeSnippet(mark)], kind: "terminal", ledger, stop: { graceMs: 2_000 } });
    expect(Boolean(group.tag.cgroup)).toBe(cgroups);
    expect(await group.exited).toEqual({ exitCode: 0, signal: null });
    const pids = await escapee(mark);
    // It left the group: a stop of the group alone would miss it.
    for (const pid of pids) expect(readProcStat(pid)!.pgid).not.toBe(group.entry.pgid);
    expect(await group.stop()).not.toBe("already-gone");
    expect(await waitUntilGone(pids, 100)).toEqual([]);
    // Nothing is left in the cgroup tree either.
    if (cgroups) expect(existsSync(scope.cgroupDirectory!)).toBe(false);
  });
});

describe("what only a cgroup catches", () => {
  it.skipIf(!cgroupsUsable)("a daemon that also cleared its environment (env -i) is stopped through its cgroup", async () => {
    const ledger = new InMemoryProcessGroupLedger();
    const scope = ProcessScope.forDataDir(tempDir("berth-scope-"), { cgroups: true });
    attachScope(ledger, scope);
    const mark = `cleared-${randomUUID()}`;
    const group = await spawnGroup({
      command: "/bin/sh",
      args: ["-c", escapeSnippet(mark, { clearEnvironment: true })],
      kind: "terminal",
      ledger,
      stop: { graceMs: 2_000 },
    });
    await group.exited;
    const pids = await escapee(mark);
    expect(scanMarked({ exact: group.tag.marker }).matches.map((stat) => stat.pid)).toEqual([]);
    // Born in its cgroup: the launcher moved the child before its command ran, the host stayed where it was.
    for (const pid of pids) expect(readFileSync(`/proc/${pid}/cgroup`, "utf8")).toContain(`/${basename(group.tag.cgroup!)}\n`);
    expect(readFileSync("/proc/self/cgroup", "utf8")).not.toContain("berth-");
    await group.stop();
    expect(await waitUntilGone(pids, 100)).toEqual([]);
    expect(existsSync(scope.cgroupDirectory!)).toBe(false);
  });

  it.skipIf(!cgroupsUsable)("a terminal's env -i daemon is stopped at the terminal's release by a host with default settings", async () => {
    const clock = new VirtualClock();
    const mark = `cleared-terminal-${randomUUID()}`;
    const { host, workDir } = await startHost({ clock });
    expect(host.processTracking().mode).toBe("cgroup");
    const session = await host.createSession({ cwd: workDir });
    host.hold(session.id, "client");
    expect((await host.prompt(session.id, text(`/run ${escapeSnippet(mark, { clearEnvironment: true })}; echo started`))).stopReason).toBe(
      "end_turn",
    );
    // The demo agent releases its terminal once the command exited; only the cgroup leads to this daemon.
    await waitUntil(() => pidsWithArgument(mark).length === 0, "the terminal's env -i daemon was stopped at the terminal's release");
  });
});

describe("which tracking a host uses, and says so", () => {
  it("cgroups wherever the host may create them, else the marker alone with the reason, in a start-up line and the metrics", async () => {
    const { berth, logs } = await startSecureBerth();
    const line = logs.find((entry) => entry.msg.startsWith("process tracking:"));
    expect(berth.host.processTracking().mode).toBe(tracking.mode);
    if (cgroupsUsable) {
      expect(line).toMatchObject({
        msg: "process tracking: a cgroup v2 per child, and the environment marker",
        tracking: "cgroup",
        marker: "BERTH_GROUP",
      });
      expect(String(line?.cgroups)).toMatch(/\/berth-[0-9a-f]{12}$/);
    } else {
      expect(line).toMatchObject({
        msg: "process tracking: the environment marker only",
        tracking: "marker",
        reason: tracking.mode === "marker" ? tracking.reason : "",
      });
    }
  });

  it("BERTH_CGROUPS=off turns cgroups off", () => {
    const before = process.env.BERTH_CGROUPS;
    process.env.BERTH_CGROUPS = "off";
    try {
      expect(ProcessScope.forDataDir(tmpdir()).tracking).toEqual({ mode: "marker", reason: "turned off (BERTH_CGROUPS=off)" });
    } finally {
      if (before === undefined) delete process.env.BERTH_CGROUPS;
      else process.env.BERTH_CGROUPS = before;
    }
  });
});

/** An agent whose start leaves a daemon behind, then runs the demo agent. */
function escapingAgent(mark: string) {
  return {
    command: "/bin/sh",
    args: ["-c", `${escapeSnippet(mark)}; exec "$0" "$@"`, process.execPath, demoAgentMain, "--state-dir", tempDir("berth-escape-agent-state-")],
  };
}

describe("a host stops every daemon its agents and terminals left", () => {
  it("after the agent's release", async () => {
    const clock = new VirtualClock();
    const mark = `agent-${randomUUID()}`;
    const { host, workDir } = await startHost({ clock, config: { agents: { escaper: escapingAgent(mark) } } });
    const session = await host.createSession({ cwd: workDir, agent: "escaper" });
    const hold = host.hold(session.id, "client");
    await hold.child;
    const pids = await escapee(mark);
    hold.release();
    await clock.advance(16_000);
    await waitUntil(() => host.getSession(session.id)?.state === "childless", "the agent child was released");
    expect(await waitUntilGone(pids, 2_000)).toEqual([]);
  });

  it("after a terminal's release, and the agent's daemon at eviction", async () => {
    const clock = new VirtualClock();
    const agentMark = `agent-${randomUUID()}`;
    const terminalMark = `terminal-${randomUUID()}`;
    // A held location is evicted at the idle TTL only with evictHeld (docs/host.md).
    const { host, workDir } = await startHost({ clock, config: { evictHeld: true, agents: { escaper: escapingAgent(agentMark) } } });
    const session = await host.createSession({ cwd: workDir, agent: "escaper" });
    host.hold(session.id, "client");
    expect((await host.prompt(session.id, text(`/run ${escapeSnippet(terminalMark)}; echo started`))).stopReason).toBe("end_turn");
    const agentPids = await escapee(agentMark);
    // The demo agent releases its terminal once the command exited: the daemon goes with it.
    await waitUntil(() => pidsWithArgument(terminalMark).length === 0, "the terminal's daemon was stopped at the terminal's release");

    await clock.advance(61 * 60_000);
    await host.whenSettled();
    expect(host.locations()).toEqual([]);
    expect(await waitUntilGone(agentPids, 2_000)).toEqual([]);
  });
});

describe("berth serve: a host's daemons die with it, or at the next start", () => {
  function serve(dataDir: string, configFile: string): BerthProcess {
    const berth = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, "--config", configFile, "--release-grace", "1h"], {
      XDG_CONFIG_HOME: dataDir,
    });
    hosts.push(berth);
    return berth;
  }

  async function hostWithDaemons() {
    const dataDir = tempDir("berth-escape-data-");
    const workDir = tempDir("berth-escape-work-");
    const agentMark = `agent-${randomUUID()}`;
    const terminalMark = `terminal-${randomUUID()}`;
    const configFile = join(dataDir, "config.json");
    writeFileSync(configFile, JSON.stringify({ agents: { escaper: escapingAgent(agentMark) }, defaultAgent: "escaper" }));
    const berth = serve(dataDir, configFile);
    const { token, acpUrl } = await berth.startupLine();
    const client = await AcpTestClient.connect(acpUrl, { token });
    const sessionId = await client.newSession(workDir);
    // The terminal keeps running (the turn waits on it) while its daemon left its group.
    void client.prompt(sessionId, `/run ${escapeSnippet(terminalMark)}; sleep 3600`).catch(() => undefined);
    const pids = [...(await escapee(agentMark)), ...(await escapee(terminalMark))];
    return { berth, client, pids, dataDir, configFile };
  }

  it("after SIGTERM of the host, leaving no cgroup behind", async () => {
    const { berth, client, pids, dataDir } = await hostWithDaemons();
    berth.signal("SIGTERM");
    expect(await berth.exited).toEqual({ code: 0, signal: null });
    await client.close();
    expect(await waitUntilGone(pids, 100)).toEqual([]);
    // The killed daemons counted as members until init reaped them; their cgroups went after.
    if (cgroupsUsable) expect(existsSync(ProcessScope.forDataDir(dataDir).cgroupDirectory!)).toBe(false);
  });

  it("after SIGKILL of the host: reaped at the next start on the same data directory", async () => {
    const { berth, client, pids, dataDir, configFile } = await hostWithDaemons();
    berth.signal("SIGKILL");
    expect(await berth.exited).toEqual({ code: null, signal: "SIGKILL" });
    await client.close();
    // Nothing stopped them: the host died at once.
    expect(pids.filter(processIsRunning)).toEqual(pids);

    const next = serve(dataDir, configFile);
    await next.startupLine();
    expect(await waitUntilGone(pids, 100)).toEqual([]);
    // Reaped at start-up: with the group they left (found by its marker) or by the sweep of every marked process.
    // (logged on stderr, which may reach this process after the start-up line on stdout)
    await waitUntil(() => next.logLines().some((line) => line.kind === "group_reaped"), "the next host logged what it reaped");
    next.signal("SIGTERM");
    expect(await next.exited).toEqual({ code: 0, signal: null });
    if (cgroupsUsable) expect(existsSync(ProcessScope.forDataDir(dataDir).cgroupDirectory!)).toBe(false);
  });
});
