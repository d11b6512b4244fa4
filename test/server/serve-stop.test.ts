import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { killLeftovers, startedProcess, type StartedProcess } from "../support/process-table.js";
import { AcpTestClient, cleanUp, processIsRunning, tempDir, waitUntil, waitUntilGone } from "./server-harness.js";
import { BerthProcess } from "./serve-process.js";

/** Faults on demand inside `berth serve`: SIGUSR2 throws an uncaught exception, SIGHUP leaves a rejection unhandled. */
const faults = { NODE_OPTIONS: `--import=${new URL("./fixtures/inject-faults.mjs", import.meta.url).href}` };

const processes: BerthProcess[] = [];
const spawned: StartedProcess[] = [];

afterEach(async () => {
  for (const berth of processes.splice(0)) berth.killGroup();
  killLeftovers(spawned.splice(0));
  await cleanUp();
});

function serve(config: object, env: Record<string, string> = {}): BerthProcess {
  const dataDir = tempDir("berth-stop-data-");
  const configFile = join(tempDir("berth-stop-config-"), "config.json");
  writeFileSync(configFile, JSON.stringify(config));
  const berth = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, "--config", configFile], {
    XDG_CONFIG_HOME: tempDir("berth-stop-xdg-"),
    BERTH_LOG_LEVEL: "info",
    ...env,
  });
  processes.push(berth);
  return berth;
}

async function sessionView(url: string, token: string, sessionId: string): Promise<SessionView> {
  const response = await fetch(`${url}/api/sessions/${sessionId}`, { headers: { authorization: `Bearer ${token}` } });
  return (await response.json()) as SessionView;
}

/** Berth's log lines at level error (50) or above, and whatever on stderr is not a log line (a raw stack). */
function errorsOf(berth: BerthProcess): string[] {
  return berth.stderr.split("\n").filter((line) => {
    if (line === "") return false;
    try {
      const entry = JSON.parse(line) as { level?: unknown; code?: unknown };
      // A turn's failure answered to its client (the agent died) is the client's error, not Berth's.
      return Number(entry.level) >= 50 && entry.code !== "agent_failed";
    } catch {
      return true;
    }
  });
}

describe("berth serve stopping on SIGTERM", () => {
  it("an agent's helper that speaks after the host closed its store: Berth keeps the words, stops cleanly and exits 0", async () => {
    // Shutdown gives interrupted turns 5 s; the dead agent's group is given 60 s (stopTimeout) after SIGTERM; its helper
    // speaks 7 s after that SIGTERM, then exits: after the 5 s, while what is left of the agent is still being stopped
    // (before the fix, the store was closed by then). The helper's exit ends the group's stop, not the 60 s.
    const berth = serve({ stopTimeout: "60s" });
    const { url, token, acpUrl } = await berth.startupLine();
    const workDir = tempDir("berth-stop-work-");
    const client = await AcpTestClient.connect(acpUrl, { token });
    const sessionId = await client.newSession(workDir);
    expect((await client.prompt(sessionId, "/straggle 7s Last words.")).stopReason).toBe("end_turn");
    const helper = Number(/straggler pid: (\d+)/.exec(client.texts(sessionId))![1]);
    spawned.push(startedProcess(helper));
    const agent = (await sessionView(url, token, sessionId)).pid!;
    // The agent dies on its own mid-turn; its turn lasts as long as its stdout is open (the helper holds it).
    const crashed = client.prompt(sessionId, "/crash").then(
      () => "answered",
      (error: Error) => error.message,
    );
    await waitUntil(() => !processIsRunning(agent), "the agent exited");
    berth.signal("SIGTERM");

    expect(await berth.exited, errorsOf(berth).join("\n")).toEqual({ code: 0, signal: null });
    expect(errorsOf(berth)).toEqual([]);
    // Said while the host stopped, its client still connected: kept and delivered, not lost; the turn answered before the socket closed.
    expect(client.texts(sessionId)).toContain("Last words.");
    expect(await crashed).toMatch(/the turn failed/);
    expect(await waitUntilGone([helper])).toEqual([]);
    expect(existsSync(join(berth.dataDir!, "host.json"))).toBe(false);
    expect(berth.logLines().map((line) => line.msg)).toContain("berth stopped");
  }, 90_000);

  it("an uncaught exception: one error line with its stack, then an orderly stop (agents stopped, host file removed), exit 1", async () => {
    const berth = serve({}, faults);
    const { url, token, acpUrl } = await berth.startupLine();
    const client = await AcpTestClient.connect(acpUrl, { token });
    const sessionId = await client.newSession(tempDir("berth-stop-work-"));
    const agent = (await sessionView(url, token, sessionId)).pid!;
    spawned.push(startedProcess(agent));

    berth.signal("SIGUSR2");
    expect(await berth.exited).toEqual({ code: 1, signal: null });
    const lines = berth.logLines();
    const crash = lines.filter((line) => line.msg === "uncaught exception: stopping Berth");
    expect(crash).toHaveLength(1);
    expect(crash[0]).toMatchObject({ level: 50, err: { message: "injected fault: an uncaught exception" } });
    expect((crash[0]!.err as { stack: string }).stack).toMatch(/^Error: injected fault: an uncaught exception\n\s+at /);
    expect(lines.map((line) => line.msg)).toEqual(expect.arrayContaining(["host stopped", "berth stopped"]));
    expect(await waitUntilGone([agent])).toEqual([]);
    expect(existsSync(join(berth.dataDir!, "host.json"))).toBe(false);
  });

  it("an unhandled rejection: one error line with its stack; Berth goes on serving, and a SIGTERM still exits 0", async () => {
    const berth = serve({}, faults);
    const { url, token } = await berth.startupLine();

    berth.signal("SIGHUP");
    await waitUntil(() => berth.logLines().some((line) => line.msg === "unhandled promise rejection"), "the rejection was logged");
    const logged = berth.logLines().filter((line) => line.msg === "unhandled promise rejection");
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 50, err: { message: "injected fault: an unhandled rejection" } });
    expect((logged[0]!.err as { stack: string }).stack).toMatch(/^Error: injected fault: an unhandled rejection\n\s+at /);
    const sessions = await fetch(`${url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } });
    expect(sessions.status).toBe(200);

    berth.signal("SIGTERM");
    expect(await berth.exited).toEqual({ code: 0, signal: null });
  });
});
