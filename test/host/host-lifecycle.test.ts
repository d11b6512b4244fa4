import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { closeAllHosts, collect, processIsRunning, startHost, tempDir, text, waitUntil, waitUntilGone } from "./host-harness.js";

afterEach(closeAllHosts);

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const httpService = fileURLToPath(new URL("./fixtures/http-service.mjs", import.meta.url));

/** The stored records of a kind, once what was queued so far is committed (records are seen only then). */
async function recordsOf(host: Awaited<ReturnType<typeof startHost>>["host"], kind: string) {
  await host.committed();
  return host.recentRecords(1000).filter((r) => r.record.kind === kind);
}

describe("host lifecycle with real processes (lifecycle timers on a virtual clock)", () => {
  it("a /run blocked for 3 virtual hours is not interrupted, keeps its location and services, and completes when released", async () => {
    const clock = new VirtualClock();
    const startedAt = clock.now();
    // evictHeld on: the held session's location idles out like any other once the turn is done.
    const { host, workDir } = await startHost({ clock, config: { evictHeld: true } });
    const session = await host.createSession({ cwd: workDir });
    host.hold(session.id, "client");
    const live = collect(host, session.id);
    const turn = host.prompt(session.id, text("/run while [ ! -e go ]; do sleep 0.05; done; echo build finished"));
    await waitUntil(
      () => live.events.some((e) => e.type === "update" && e.notification.update.sessionUpdate === "tool_call"),
      "the command runs in a terminal",
    );
    const pid = host.getSession(session.id)!.pid!;

    for (const at of [63 * MINUTE, 119 * MINUTE, 3 * HOUR]) {
      await clock.advanceTo(startedAt + at);
      expect(host.getSession(session.id)).toMatchObject({ turnActive: true, pid });
      expect(host.locations()).toMatchObject([{ directory: workDir, keptBy: "active-execution", terminals: 1 }]);
      expect(await recordsOf(host, "session_interrupted")).toEqual([]);
    }

    writeFileSync(join(workDir, "go"), "");
    expect((await turn).stopReason).toBe("end_turn");
    expect(live.events.some((e) => e.type === "update" && JSON.stringify(e.notification).includes("build finished"))).toBe(true);

    await clock.advance(59 * MINUTE);
    expect(host.locations()).toHaveLength(1);
    await clock.advance(2 * MINUTE);
    await host.whenSettled();
    expect(host.locations()).toEqual([]);
    const evicted = await recordsOf(host, "location_evicted");
    expect(evicted).toMatchObject([{ message: "location services evicted", record: { directory: workDir, reason: "idle" } }]);
    expect(await waitUntilGone([pid])).toEqual([]);
    expect(host.getSession(session.id)).toMatchObject({ state: "childless", holders: 1 });
    // The client that still holds the session is told why its agent stopped.
    expect(live.texts().filter((t) => t.includes("Berth stopped this session's agent"))).toEqual([
      "Berth stopped this session's agent (reason: idle): its location was idle for 1h and evictHeld is on. The conversation is kept; the next prompt starts the agent again.",
    ]);
  });

  it("held but idle (evictHeld off, the default): the held session keeps its location and agent past the idle TTL; at the cap both go, with a notice", async () => {
    const clock = new VirtualClock();
    const { host, workDir } = await startHost({ clock });
    const session = await host.createSession({ cwd: workDir });
    const ticket = host.hold(session.id, "editor");
    const live = collect(host, session.id);
    expect((await host.prompt(session.id, text("hello"))).stopReason).toBe("end_turn");
    const { pid } = await ticket.child;

    await clock.advance(3 * HOUR);
    expect(host.getSession(session.id)).toMatchObject({ state: "live", pid, holders: 1 });
    expect(host.locations()).toMatchObject([{ directory: workDir, state: "retained" }]);
    expect(await recordsOf(host, "location_evicted")).toEqual([]);

    await clock.advance(21 * HOUR + 2 * MINUTE);
    await host.whenSettled();
    expect(await recordsOf(host, "location_evicted")).toMatchObject([{ record: { directory: workDir, reason: "inactivity" } }]);
    expect(await waitUntilGone([pid])).toEqual([]);
    expect(host.getSession(session.id)).toMatchObject({ state: "childless", holders: 1 });
    expect(live.texts().filter((t) => t.includes("Berth stopped this session's agent"))).toEqual([
      "Berth stopped this session's agent (reason: inactivity): nothing was recorded at its location for 24h, the longest a location is kept without progress. The conversation is kept; the next prompt starts the agent again.",
    ]);
    const stopped = host.events(session.id).filter((e) => JSON.stringify(e.payload).includes("agent_stopped"));
    expect(stopped).toHaveLength(1);
    // The session carries on: the next prompt starts a new agent.
    expect((await host.prompt(session.id, text("again"))).stopReason).toBe("end_turn");
  });

  it("a held session whose agent ignores session/cancel: the agent is stopped after the interrupt timeout and its client is told why", async () => {
    const misbehaving = new URL("./fixtures/misbehaving-agent.mjs", import.meta.url).pathname;
    const clock = new VirtualClock();
    const { host, workDir } = await startHost({ clock, config: { agents: { raw: { command: process.execPath, args: [misbehaving] } } } });
    const session = await host.createSession({ cwd: workDir, agent: "raw" });
    host.hold(session.id, "editor");
    const live = collect(host, session.id);
    const settled = host.prompt(session.id, text("hang")).catch((error: unknown) => error);
    await waitUntil(() => host.getSession(session.id)!.turnActive, "the turn runs");
    const { pid } = host.getSession(session.id)!;
    expect(await host.cancel(session.id)).toBe(true);
    await clock.advance(10_000);
    await settled;
    expect(await waitUntilGone([pid!])).toEqual([]);
    expect(live.texts().filter((t) => t.includes("Berth stopped this session's agent"))).toEqual([
      "Berth stopped this session's agent (reason: unresponsive): it did not end its interrupted turn within 10s. The conversation is kept; the next prompt starts the agent again.",
    ]);
  });

  it("host shutdown: a held session's client is told its agent stops, and the notice is in the journal after the restart", async () => {
    const fixture = await startHost();
    const session = await fixture.host.createSession({ cwd: fixture.workDir });
    const { pid } = await fixture.host.hold(session.id, "editor").child;
    const live = collect(fixture.host, session.id);
    const restarted = await fixture.restart();
    expect(processIsRunning(pid)).toBe(false);
    const expected =
      "Berth stopped this session's agent (reason: shutdown): the host is shutting down. The conversation is kept; the next prompt starts the agent again.";
    expect(live.texts()).toEqual([expected]);
    expect(restarted.events(session.id).filter((e) => JSON.stringify(e.payload).includes(expected))).toHaveLength(1);
  });

  it("an unheld idle location is still evicted on its idle TTL with evictHeld off, and nobody is sent a notice", async () => {
    const clock = new VirtualClock();
    const { host, workDir } = await startHost({ clock });
    const session = await host.createSession({ cwd: workDir });
    const live = collect(host, session.id);
    const ticket = host.hold(session.id, "script");
    expect((await host.prompt(session.id, text("hello"))).stopReason).toBe("end_turn");
    const { pid } = await ticket.child;
    ticket.release();
    await clock.advance(15_000);
    expect(await waitUntilGone([pid])).toEqual([]);
    await clock.advance(61 * MINUTE);
    await host.whenSettled();
    expect(await recordsOf(host, "location_evicted")).toMatchObject([{ record: { directory: workDir, reason: "idle" } }]);
    expect(live.texts().some((t) => t.includes("Berth stopped"))).toBe(false);
  });

  it("a question left unanswered for hours is answered later and reaches the same waiting request", async () => {
    const clock = new VirtualClock();
    const { host, workDir } = await startHost({ clock });
    const session = await host.createSession({ cwd: workDir });
    const live = collect(host, session.id);
    const turn = host.prompt(session.id, text("/ask May I deploy to production?"));
    await waitUntil(() => host.pendingQuestions(session.id).length === 1, "the question is asked");
    const [question] = host.pendingQuestions(session.id);
    expect(question).toMatchObject({ kind: "permission", state: "pending" });

    await clock.advance(5 * HOUR);
    expect(host.getSession(session.id)).toMatchObject({ turnActive: true, pendingQuestions: 1 });
    expect(await recordsOf(host, "session_interrupted")).toEqual([]);

    expect(await host.answerQuestion(question!.id, { optionId: "allow" })).toMatchObject({ state: "answered" });
    expect((await turn).stopReason).toBe("end_turn");
    expect(live.texts().join("")).toContain("You chose: allow");
    await expect(host.answerQuestion(question!.id, { optionId: "deny" })).rejects.toThrow(`question "${question!.id}" was already answered`);
  });

  it("the 24 h cap interrupts with reason inactivity, journals it, stops services, terminals and the child, and leaves no process", async () => {
    const clock = new VirtualClock();
    const pidFile = join(await tmpWorkDir(), "service.pids");
    const { host, workDir } = await startHost({
      clock,
      config: {
        services: {
          web: { command: process.execPath, args: [httpService], env: { PID_FILE: pidFile }, port: "auto", mcp: { type: "http", path: "/mcp" } },
        },
      },
    });
    const session = await host.createSession({ cwd: workDir });
    host.hold(session.id, "client");
    const live = collect(host, session.id);
    const turn = host.prompt(session.id, text("/run sleep 86400"));
    // The tool call's report is the last durable event: the cap counts from it, so wait until it is in.
    await waitUntil(
      () => live.events.some((e) => e.type === "update" && e.notification.update.sessionUpdate === "tool_call"),
      "the tool call is reported",
    );
    const agentPid = host.getSession(session.id)!.pid!;
    const servicePids = readFileSync(pidFile, "utf8").trim().split(" ").map(Number);
    expect(servicePids.every(processIsRunning)).toBe(true);

    await clock.advance(23 * HOUR);
    expect(await recordsOf(host, "session_interrupted")).toEqual([]);
    // The sweep at the 24 h mark finds the cap reached; the agent then winds down in real time.
    await clock.advance(1 * HOUR);
    expect((await turn).stopReason).toBe("cancelled");
    await host.whenSettled();

    expect(await recordsOf(host, "session_interrupted")).toMatchObject([{ record: { sessionId: session.id, reason: "inactivity" } }]);
    const journal = host.events(session.id);
    expect(journal.find((e) => e.kind === "interrupted")?.payload).toEqual({ reason: "inactivity" });
    const notice = live.texts().find((t) => t.includes("reason: inactivity"));
    expect(notice).toContain("Berth interrupted this turn (reason: inactivity): nothing was recorded for 24h");
    expect(await recordsOf(host, "location_evicted")).toMatchObject([{ record: { directory: workDir, reason: "inactivity" } }]);
    expect(await waitUntilGone([agentPid, ...servicePids])).toEqual([]);
    expect(host.locations()).toEqual([]);
  });

  it("shutdown while a released child's group is still stopping: waited for, not stopped and recorded again", async () => {
    const clock = new VirtualClock();
    // A helper in the agent's group ignores SIGTERM and exits 3 s after it: the release's stop outlasts the agent.
    const { host, workDir } = await startHost({ clock, config: { stopTimeout: "30s" } });
    const released: string[] = [];
    host.onRecord(({ record }) => {
      if (record.kind === "child_released") released.push(String(record.why));
    });
    const session = await host.createSession({ cwd: workDir });
    const ticket = host.hold(session.id, "laptop");
    const { pid } = await ticket.child;
    const live = collect(host, session.id);
    await host.prompt(session.id, text("/straggle 3s Last words."));
    const helper = Number(/straggler pid: (\d+)/.exec(live.texts().join(""))![1]);
    ticket.release();
    await clock.advance(15_000);
    await waitUntil(() => !processIsRunning(pid), "the released agent exited");
    expect(processIsRunning(helper)).toBe(true);

    await host.shutdown();
    expect(await waitUntilGone([helper])).toEqual([]);
    expect(released).toEqual(["grace"]);
  });

  it("release grace with a real child: a holder returning within the grace keeps the same pid; released once after it", async () => {
    const clock = new VirtualClock();
    const { host, workDir } = await startHost({ clock });
    const session = await host.createSession({ cwd: workDir });
    const first = host.hold(session.id, "laptop");
    const { pid } = await first.child;
    first.release();
    expect(host.getSession(session.id)!.releaseAt).toBe(clock.now() + 15_000);

    await clock.advance(10_000);
    const back = host.hold(session.id, "laptop");
    expect((await back.child).pid).toBe(pid);
    back.release();
    await clock.advance(14_999);
    expect(processIsRunning(pid)).toBe(true);
    await clock.advance(1);
    expect(await waitUntilGone([pid])).toEqual([]);
    await waitUntil(() => host.recentRecords(1000).some((r) => r.record.kind === "child_released"), "the release is recorded");
    await clock.advance(60_000);
    expect(await recordsOf(host, "child_released")).toHaveLength(1);
    expect(host.getSession(session.id)).toMatchObject({ state: "childless", pid: null, holders: 0 });
  });

  it("/spawn-orphan then release: the grandchild dies with the agent's process group", async () => {
    const clock = new VirtualClock();
    const { host, workDir } = await startHost({ clock });
    const session = await host.createSession({ cwd: workDir });
    const ticket = host.hold(session.id, "client");
    const { pid } = await ticket.child;
    const live = collect(host, session.id);
    await host.prompt(session.id, text("/spawn-orphan"));
    const orphanPid = Number(/orphan pid: (\d+)/.exec(live.texts().join(""))![1]);
    expect(processIsRunning(orphanPid)).toBe(true);
    ticket.release();
    await clock.advance(15_000);
    expect(await waitUntilGone([pid, orphanPid])).toEqual([]);
  });

  it("/crash mid-turn: the turn ends with a recorded error, the session is childless, a new prompt works", async () => {
    const { host, workDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    const { pid } = await host.hold(session.id, "client").child;
    await expect(host.prompt(session.id, text("/crash"))).rejects.toThrow(/the turn failed/);
    await waitUntil(() => host.getSession(session.id)!.state === "childless", "the session becomes childless");
    // Events are seen once committed: the exit is journaled by the writer, after the state changed.
    await waitUntil(
      () => ["agent_exited", "turn_ended"].every((kind) => host.events(session.id).some((e) => e.kind === kind)),
      "the exit and the turn's end are journaled",
    );
    const ended = host
      .events(session.id)
      .filter((e) => e.kind === "turn_ended")
      .at(-1);
    expect((ended!.payload as { error: string }).error).toBeTruthy();
    expect(host.getSession(session.id)).toMatchObject({ holders: 1, turnActive: false });

    expect((await host.prompt(session.id, text("back again"))).stopReason).toBe("end_turn");
    expect(host.getSession(session.id)!.pid).not.toBe(pid);
  });

  it("fs requests are confined to the session's directory, after resolving .. and symlinks", async () => {
    const { host, workDir } = await startHost();
    const outside = await tmpWorkDir();
    writeFileSync(join(outside, "secret.txt"), "top secret");
    writeFileSync(join(workDir, "notes.txt"), "line one\nline two\n");
    symlinkSync(join(outside, "secret.txt"), join(workDir, "link-out.txt"));
    mkdirSync(join(workDir, "sub"));
    const session = await host.createSession({ cwd: workDir });
    const live = collect(host, session.id);
    const say = async (prompt: string) => {
      const before = live.texts().length;
      await host.prompt(session.id, text(prompt));
      return live.texts().slice(before).join("");
    };

    expect(await say(`/read ${workDir}/notes.txt`)).toContain("line one\nline two");
    expect(await say(`/write ${workDir}/sub/new.txt hello`)).toContain("Wrote 5 characters");
    expect(readFileSync(join(workDir, "sub", "new.txt"), "utf8")).toBe("hello");
    for (const path of [`${workDir}/../${outside.split("/").pop()}/secret.txt`, join(outside, "secret.txt"), join(workDir, "link-out.txt")]) {
      const reply = await say(`/read ${path}`);
      expect(reply).toContain("is outside the session's directories");
      expect(reply).not.toContain("top secret");
    }
    expect(await say(`/write ${workDir}/link-out.txt overwritten`)).toContain("outside the session's directories");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("top secret");
    expect(await say("/read relative/path.txt")).toMatch(/absolute/);
  });

  it("location services: started on first need, passed to agents that speak HTTP MCP, shared, stopped at eviction", async () => {
    const clock = new VirtualClock();
    const pidFile = join(await tmpWorkDir(), "service.pids");
    const { host, workDir } = await startHost({
      clock,
      config: {
        services: {
          web: { command: process.execPath, args: [httpService], env: { PID_FILE: pidFile }, port: "auto", mcp: { type: "http", path: "/mcp" } },
        },
      },
    });
    const a = await host.createSession({ cwd: workDir });
    const b = await host.createSession({ cwd: workDir });
    expect(host.locations()).toEqual([]);
    expect(existsSync(pidFile)).toBe(false);

    const live = collect(host, a.id);
    await host.prompt(a.id, text("/mcp-servers"));
    const servers = JSON.parse(live.texts().join("")) as Array<{ type: string; name: string; url: string }>;
    expect(servers).toMatchObject([{ type: "http", name: "web" }]);
    expect(await (await fetch(servers[0]!.url)).text()).toBe("service /mcp");
    await host.prompt(b.id, text("hi"));
    const pids = readFileSync(pidFile, "utf8").trim().split(" ").map(Number);
    expect(host.locations()[0]!.services).toMatchObject([{ name: "web", state: "ready", pid: pids[0] }]);

    await clock.advance(61 * MINUTE);
    await host.whenSettled();
    expect(await waitUntilGone(pids)).toEqual([]);
  });
});

async function tmpWorkDir(): Promise<string> {
  return tempDir("berth-outside-");
}
