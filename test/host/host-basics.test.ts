import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { closeAllHosts, collect, processIsRunning, startHost, text, waitUntil, waitUntilGone } from "./host-harness.js";

afterEach(closeAllHosts);

/** A virtual clock that remembers the delay of every timer set on it. */
class DelayRecordingClock extends VirtualClock {
  readonly delays: number[] = [];
  override setTimeout(callback: () => void, delayMs: number): ReturnType<VirtualClock["setTimeout"]> {
    this.delays.push(delayMs);
    return super.setTimeout(callback, delayMs);
  }
}

describe("host with the demo agent (real processes, real SQLite)", () => {
  it("prompts a session: streams the reply to subscribers in order and journals the turn", async () => {
    const { host, workDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    expect(session).toMatchObject({ agent: "demo", cwd: workDir, state: "childless", pid: null, holders: 0 });
    const live = collect(host, session.id);

    const ticket = host.hold(session.id, "client-1");
    const child = await ticket.child;
    expect(host.getSession(session.id)).toMatchObject({ state: "live", pid: child.pid, holders: 1 });

    const result = await host.prompt(session.id, text("hello there, demo agent"));
    expect(result.stopReason).toBe("end_turn");
    expect(live.texts().join("")).toBe("hello there, demo agent");
    expect(live.texts().length).toBeGreaterThanOrEqual(3);

    const events = host.events(session.id);
    const kinds = events.map((event) => event.kind);
    // The agent announces its commands as the session opens; that update may be journaled before the turn or in it.
    const before = events.slice(0, kinds.indexOf("turn_started"));
    expect(before.map((event) => JSON.stringify(event.payload))).toEqual(
      before.map(() => expect.stringContaining('"sessionUpdate":"available_commands_update"')),
    );
    expect(kinds).toContain("turn_started");
    expect(kinds.at(-1)).toBe("turn_ended");
    expect(kinds.filter((kind) => kind === "update").length).toBeGreaterThanOrEqual(3);
    const seqs = live.events.flatMap((event) => (event.type === "update" ? [event.seq] : []));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(host.getSession(session.id)?.title).toBe("hello there, demo agent");

    ticket.release();
  });

  it("hasSession says what getSession would find, without building the view: a session created, an unknown id, a session deleted", async () => {
    const { host, workDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    const ids = [session.id, "no-such-session"];
    expect(ids.map((id) => host.hasSession(id))).toEqual([true, false]);
    expect(ids.map((id) => host.getSession(id) !== undefined)).toEqual([true, false]);
    await host.deleteSession(session.id);
    expect(host.hasSession(session.id)).toBe(false);
    expect(host.getSession(session.id)).toBeUndefined();
  });

  it("tells a session changed once its turn's end is committed: the view read then has the turn's outcome", async () => {
    const { host, workDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    const outcomes: Array<string | undefined> = [];
    host.onSessionChanged((sessionId) => {
      if (sessionId === session.id) outcomes.push(host.getSession(sessionId)?.lastTurn?.outcome);
    });
    await host.prompt(session.id, text("hi"));
    await host.committed();
    expect(outcomes.at(-1)).toBe("completed");
  });

  it("refuses bad input with clear errors and keeps running", async () => {
    const { host, workDir } = await startHost();
    await expect(host.createSession({ cwd: "relative/dir" })).rejects.toThrow(/must be absolute, got relative path "relative\/dir"/);
    await expect(host.createSession({ cwd: `${workDir}/missing` })).rejects.toThrow(`directory does not exist: ${workDir}/missing`);
    await expect(host.createSession({ cwd: workDir, agent: "nope" })).rejects.toThrow('unknown agent "nope" (configured agents: demo)');
    await expect(host.prompt("no-such-session", text("hi"))).rejects.toThrow('no session "no-such-session"');
    const session = await host.createSession({ cwd: workDir });
    expect((await host.prompt(session.id, text("still fine"))).stopReason).toBe("end_turn");
  });

  it("an agent command that does not exist: a clear acquisition error, nothing held", async () => {
    const { host, workDir } = await startHost({ config: { agents: { ghost: { command: "/nonexistent/agent-binary" } } } });
    const session = await host.createSession({ cwd: workDir, agent: "ghost" });
    const ticket = host.hold(session.id, "client-1");
    await expect(ticket.child).rejects.toThrow(
      /could not start the agent for session .*: cannot start agent "ghost": cannot start command "\/nonexistent\/agent-binary"/,
    );
    expect(host.getSession(session.id)).toMatchObject({ state: "childless", holders: 0 });
  });

  it("an agent that never answers initialize times out with a clear error and is stopped", async () => {
    const { host, workDir } = await startHost({
      config: { initializeTimeout: "300ms", agents: { mute: { command: "sleep", args: ["3600"] } } },
    });
    const session = await host.createSession({ cwd: workDir, agent: "mute" });
    await expect(host.prompt(session.id, text("hi"))).rejects.toThrow('agent "mute" did not answer initialize within 300 ms');
    await host.committed();
    const reaped = host.recentRecords().filter((r) => r.record.kind === "acquisition_failed");
    expect(reaped).toHaveLength(1);
  });

  it("an agent that answers initialize but never opens its session: a clear error after initializeTimeout, stopped, nothing stuck", async () => {
    // Answers initialize, then reads on and answers nothing.
    const silent = `require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
      const message = JSON.parse(line);
      if (message.method === "initialize") console.log(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: 1 } }));
    });`;
    // Long enough for the agent's own start on a loaded machine: it must answer initialize in time.
    const { host, workDir } = await startHost({
      config: { initializeTimeout: "5s", agents: { silent: { command: process.execPath, args: ["-e", silent] } } },
    });
    const session = await host.createSession({ cwd: workDir, agent: "silent" });
    await expect(host.prompt(session.id, text("hi"))).rejects.toThrow('agent "silent" did not answer session/new within 5000 ms');
    await host.committed();
    const failed = host.recentRecords().filter((r) => r.record.kind === "acquisition_failed");
    expect(failed).toHaveLength(1);
    expect(host.getSession(session.id)).toMatchObject({ state: "childless", pid: null });
    // Nothing waits on it: the session can be deleted at once.
    await host.deleteSession(session.id);
    expect(host.getSession(session.id)).toBeUndefined();
  });

  it("an agent that fails at start is reported by its exit and its own last stderr lines, not by the broken pipe", async () => {
    const script = 'echo "fatal: no API key configured" >&2; echo "see https://example.com/setup" >&2; exit 3';
    const { host, workDir } = await startHost({ config: { agents: { broken: { command: "sh", args: ["-c", script] } } } });
    for (let attempt = 0; attempt < 5; attempt++) {
      const session = await host.createSession({ cwd: workDir, agent: "broken" });
      const failure = await host.hold(session.id, "client-1").child.then(
        () => undefined,
        (error: unknown) => String(error instanceof Error ? `${error.message} ${String(error.cause)}` : error),
      );
      expect(failure).toContain('agent "broken" exited during initialize (exit code 3)');
      expect(failure).toContain("fatal: no API key configured");
      expect(failure).toContain("see https://example.com/setup");
      expect(failure).not.toMatch(/EPIPE|connection closed/);
    }
  });

  it("shutdown stops every child as a group", async () => {
    const fixture = await startHost();
    const session = await fixture.host.createSession({ cwd: fixture.workDir });
    const child = await fixture.host.hold(session.id, "c").child;
    expect(processIsRunning(child.pid)).toBe(true);
    await fixture.host.shutdown();
    expect(await waitUntilGone([child.pid])).toEqual([]);
  });
});

describe("an agent that misbehaves", () => {
  it("garbage lines and updates without a session are refused, unknown update kinds relayed; the turn, the session and the host carry on", async () => {
    const misbehaving = fileURLToPath(new URL("./fixtures/misbehaving-agent.mjs", import.meta.url));
    const { host, workDir } = await startHost({ config: { agents: { raw: { command: process.execPath, args: [misbehaving] } } } });
    const session = await host.createSession({ cwd: workDir, agent: "raw" });
    const live = collect(host, session.id);
    expect((await host.prompt(session.id, text("go"))).stopReason).toBe("end_turn");
    expect(live.texts()).toEqual(["still here"]);
    // An update kind Berth does not know is relayed verbatim (clients decide); one without a session is refused.
    const kinds = live.events.flatMap((e) => (e.type === "update" ? [e.notification.update.sessionUpdate] : []));
    expect(kinds).toEqual(["some_future_kind", "agent_message_chunk"]);
    expect((await host.prompt(session.id, text("again"))).stopReason).toBe("end_turn");
  });
});

describe("agents that do not cooperate", () => {
  it("an agent that ignores session/cancel is stopped after the interrupt timeout, and the turn settles", async () => {
    const misbehaving = fileURLToPath(new URL("./fixtures/misbehaving-agent.mjs", import.meta.url));
    const clock = new VirtualClock();
    const { host, workDir } = await startHost({ clock, config: { agents: { raw: { command: process.execPath, args: [misbehaving] } } } });
    const session = await host.createSession({ cwd: workDir, agent: "raw" });
    const turn = host.prompt(session.id, text("hang"));
    const settled = turn.catch((error: unknown) => error);
    await waitUntil(() => host.getSession(session.id)!.turnActive, "the turn runs");
    const { pid } = host.getSession(session.id)!;
    expect(await host.cancel(session.id)).toBe(true);
    await clock.advance(9_999);
    expect(host.getSession(session.id)!.turnActive).toBe(true);
    await clock.advance(1);
    expect(await settled).toMatchObject({ message: expect.stringMatching(/the turn failed/) });
    expect(await waitUntilGone([pid!])).toEqual([]);
    expect(host.getSession(session.id)).toMatchObject({ turnActive: false, state: "childless" });
  });

  it("an agent that crashes takes what it left in its process group with it", async () => {
    const { host, workDir } = await startHost();
    const session = await host.createSession({ cwd: workDir });
    const live = collect(host, session.id);
    await host.prompt(session.id, text("/spawn-orphan"));
    const orphanPid = Number(/orphan pid: (\d+)/.exec(live.texts().join(""))![1]);
    expect(processIsRunning(orphanPid)).toBe(true);
    // The turn's error says the agent exited, and how (not the SDK's "ACP connection closed").
    await expect(host.prompt(session.id, text("/crash"))).rejects.toThrow(/^the turn failed: the agent exited \(exit code 3\)/);
    expect(await waitUntilGone([orphanPid])).toEqual([]);
  });

  it("an agent that keeps crashing is restarted with backoff, never in a tight loop", async () => {
    const clock = new DelayRecordingClock();
    const { host, workDir } = await startHost({ clock });
    const session = await host.createSession({ cwd: workDir });
    const acquired = () => host.recentRecords().filter((r) => r.record.kind === "child_acquired").length;
    for (let crash = 1; crash <= 2; crash++) {
      await expect(host.prompt(session.id, text("/crash"))).rejects.toThrow(/the turn failed/);
      await waitUntil(() => host.getSession(session.id)!.state === "childless", "the crash is noticed");
    }
    expect(acquired()).toBe(2);
    // Second crash within a minute: the next start waits 500 ms (then 1 s, 2 s, ... up to 30 s).
    const scheduledBefore = clock.delays.length;
    const next = host.prompt(session.id, text("hello again"));
    // The start is parked on its backoff timer: until the clock moves, no agent can start.
    await waitUntil(() => clock.delays.slice(scheduledBefore).includes(500), "the restart waits out its backoff");
    expect(acquired()).toBe(2);
    await clock.advance(500);
    expect((await next).stopReason).toBe("end_turn");
    expect(acquired()).toBe(3);
  });
});
