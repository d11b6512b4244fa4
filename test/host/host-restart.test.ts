import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { loadConfigFile, parseConfig } from "../../src/config/load-config.js";
import { dataPaths } from "../../src/config/paths.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { Store } from "../../src/store/store.js";
import { closeAllHosts, collect, processIsRunning, startHost, tempDir, text, waitUntil, waitUntilGone } from "./host-harness.js";

afterEach(closeAllHosts);
// The dying host of a test that failed before killing it.
afterEach(() => {
  if (dying && dying.exitCode === null && dying.signalCode === null) process.kill(-dying.pid!, "SIGKILL");
  dying = undefined;
});
let dying: ChildProcess | undefined;

const hostProcess = fileURLToPath(new URL("./fixtures/host-process.mjs", import.meta.url));

describe("restart: a host that died leaves nothing behind for long", () => {
  it("a second host on the same data directory lists the sessions, replays their events, reaps leftover groups and orphans questions", async () => {
    const dataDir = tempDir("berth-restart-");
    const workDir = tempDir("berth-work-");
    const dead = spawn(process.execPath, [hostProcess, dataDir, workDir], { stdio: ["ignore", "pipe", "inherit"], detached: true });
    dying = dead;
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: dead.stdout! }).once("line", resolve);
      dead.once("exit", (code) => reject(new Error(`host process exited early (${code})`)));
    });
    const { sessionId, agentPid, orphanPid } = JSON.parse(line) as { sessionId: string; agentPid: number; orphanPid: number };
    // The host dies abruptly. Its agent sees stdin close and exits; the agent's grandchild is left behind.
    process.kill(dead.pid!, "SIGKILL");
    expect(await waitUntilGone([dead.pid!, agentPid])).toEqual([]);
    expect(processIsRunning(orphanPid)).toBe(true);

    const restartedAt = Date.now();
    const { host } = await startHost({ dataDir });
    expect(await waitUntilGone([orphanPid])).toEqual([]);
    await host.committed();
    expect(host.recentRecords().filter((r) => r.record.kind === "group_reaped")).toMatchObject([
      { message: "leftover process group reaped", record: { pgid: agentPid, outcome: "stopped (exited)" } },
    ]);
    expect(host.listSessions()).toMatchObject([{ id: sessionId, state: "childless", pid: null, holders: 0 }]);
    const events = host.events(sessionId);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    // (The agent announced its commands when the session opened, before the turn.)
    const turn = events.findIndex((event) => event.kind === "turn_started");
    expect(events.slice(turn, turn + 2).map((event) => event.kind)).toEqual(["turn_started", "update"]);
    const asked = events.find((event) => event.kind === "question_asked")!.payload as { questionId: string };
    expect(host.pendingQuestions()).toEqual([]);
    expect(host.question(asked.questionId)).toMatchObject({ state: "orphaned" });
    // Reading never boots: nothing above started a location or an agent.
    expect(host.locations()).toEqual([]);
    const sinceRestart = host.recentRecords().filter((r) => r.at >= restartedAt);
    expect(sinceRestart.filter((r) => r.record.kind === "child_acquired" || r.record.kind === "location_booted")).toEqual([]);

    // The restored session is resumable: the agent reloads its conversation and works on.
    const live = collect(host, sessionId);
    expect((await host.prompt(sessionId, text("and now?"))).stopReason).toBe("end_turn");
    expect(live.texts().join("")).toBe("and now?");
  });
});

describe("restart: questions the previous run left pending", () => {
  it("are orphaned at start-up, each once, with its event; an answered one stays; none can be answered afterwards", async () => {
    const dataDir = tempDir("berth-restart-");
    const workDir = tempDir("berth-work-");
    const before = Store.open(dataPaths(dataDir).database);
    const ask = (id: string, sessionId: string, askedAt: number) =>
      before.questions.ask({ id, sessionId, kind: "permission", request: { toolCall: { title: id }, options: [] }, askedAt });
    for (const id of ["s1", "s2"]) before.sessions.create({ id, agent: "demo", cwd: workDir, createdAt: 1 });
    ask("q2", "s2", 3);
    ask("q1", "s1", 2);
    ask("done", "s1", 1);
    before.questions.resolve("done", "answered", { outcome: { outcome: "selected", optionId: "allow" } }, 4);
    before.close();

    const fixture = await startHost({ dataDir });
    const { host } = fixture;
    const resolved = (sessionId: string, on = host) =>
      on
        .events(sessionId)
        .filter((event) => event.kind === "question_resolved")
        .map((event) => event.payload);
    const reason = "the agent process that asked is gone (host restarted)";
    expect(host.pendingQuestions()).toEqual([]);
    expect(["q1", "q2", "done"].map((id) => host.question(id)?.state)).toEqual(["orphaned", "orphaned", "answered"]);
    expect(resolved("s1")).toEqual([{ questionId: "q1", state: "orphaned", reason }]);
    expect(resolved("s2")).toEqual([{ questionId: "q2", state: "orphaned", reason }]);
    await expect(host.answerQuestion("q1", { optionId: "allow" })).rejects.toMatchObject({
      code: "already_resolved",
    });

    // Orphaned once: the next start finds nothing pending.
    const again = await fixture.restart();
    expect(resolved("s1", again)).toHaveLength(1);
    expect(again.question("q1")?.state).toBe("orphaned");
  });
});

describe("agents that can neither load nor resume", () => {
  it("keep their child while the location is retained instead of releasing it after the grace", async () => {
    const clock = new VirtualClock();
    const { host, workDir } = await startHost({
      clock,
      config: {
        agents: { forgetful: { command: process.execPath, args: [demoAgentMain, "--no-load", "--state-dir", tempDir("berth-forgetful-state-")] } },
      },
    });
    const session = await host.createSession({ cwd: workDir, agent: "forgetful" });
    const ticket = host.hold(session.id, "client");
    const { pid } = await ticket.child;
    await host.prompt(session.id, text("remember me"));
    ticket.release();
    await clock.advance(10 * 60_000);
    expect(host.getSession(session.id)).toMatchObject({ state: "live", pid, holders: 0 });
    await clock.advance(51 * 60_000);
    await host.whenSettled();
    expect(await waitUntilGone([pid])).toEqual([]);
    expect(host.getSession(session.id)).toMatchObject({ state: "childless" });
  });
});

describe("configuration", () => {
  it("a bad file is refused with every bad key named, before anything starts", () => {
    expect(() =>
      parseConfig({ releaseGrace: 15, agents: { x: { command: "" } }, services: { s: { command: "y", port: 80 } } }, "berth.json"),
    ).toThrow(
      [
        "invalid configuration in berth.json:",
        "  agents.x.command: expected a non-empty string",
        '  services.s.port: expected "auto" (Berth allocates the port)',
        '  releaseGrace: expected a duration such as "500ms", "15s", "60m", "24h" or "7d"',
      ].join("\n"),
    );
    expect(() => loadConfigFile("/nonexistent/berth.json", { required: true })).toThrow("configuration file not found: /nonexistent/berth.json");
    expect(loadConfigFile("/nonexistent/berth.json", { required: false }).releaseGrace).toBe(15_000);
  });
});

describe("acquisitions racing with eviction and deletion", () => {
  const slowDemo = {
    command: "sh",
    args: ["-c", `touch "$STATE/spawned"; sleep 0.5; exec "${process.execPath}" "${demoAgentMain}" --state-dir "$STATE"`],
  };

  it("an agent still starting keeps its location: it is never handed services that were closed", async () => {
    const clock = new VirtualClock();
    const stateDir = tempDir("berth-slow-state-");
    const { host, workDir } = await startHost({ clock, config: { agents: { slow: { ...slowDemo, env: { STATE: stateDir } } } } });
    const first = await host.createSession({ cwd: workDir });
    await host.prompt(first.id, text("hi"));
    await clock.advance(59 * 60_000);
    const late = await host.createSession({ cwd: workDir, agent: "slow" });
    const ticket = host.hold(late.id, "client");
    await waitUntil(() => existsSync(join(stateDir, "spawned")) && host.getSession(late.id)!.state === "acquiring", "the slow agent is starting");
    await clock.advance(2 * 60_000);
    const child = await ticket.child;
    expect(host.locations()).toMatchObject([{ directory: workDir, state: "retained" }]);
    expect(host.recentRecords().filter((r) => r.record.kind === "location_evicted")).toEqual([]);
    expect(host.getSession(late.id)).toMatchObject({ state: "live", pid: child.pid });
    expect((await host.prompt(late.id, text("/run echo still served"))).stopReason).toBe("end_turn");
  });

  it("deleting a session while its agent is starting leaves no process and no error behind", async () => {
    const stateDir = tempDir("berth-slow-state-");
    const { host, workDir } = await startHost({ config: { agents: { slow: { ...slowDemo, env: { STATE: stateDir } } } } });
    const session = await host.createSession({ cwd: workDir, agent: "slow" });
    const ticket = host.hold(session.id, "client");
    const outcome = ticket.child.catch((error: unknown) => error);
    await host.deleteSession(session.id);
    expect(await outcome).toBeInstanceOf(Error);
    expect(host.getSession(session.id)).toBeUndefined();
    await host.committed();
    const started = host.recentRecords().flatMap((r) => (r.record.kind === "child_acquired" ? [r.record.pid] : []));
    expect(await waitUntilGone(started)).toEqual([]);
    expect(host.listSessions()).toEqual([]);
  });
});
