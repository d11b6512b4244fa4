import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { ProcessScope } from "../../src/processes/scope.js";
import { groupMembers, killLeftovers, processGroupOf, startedProcess, type StartedProcess } from "../support/process-table.js";
import { AcpTestClient, cleanUp, RawSocket, tempDir, waitUntil, waitUntilGone } from "./server-harness.js";
import { BerthProcess, pidsWithArgument } from "./serve-process.js";

const processes: BerthProcess[] = [];
const spawned: StartedProcess[] = [];
const blockers: Server[] = [];

afterEach(async () => {
  for (const berth of processes.splice(0)) berth.killGroup();
  killLeftovers(spawned.splice(0));
  for (const blocker of blockers.splice(0)) blocker.close();
  await cleanUp();
});

function serve(args: readonly string[], dataDir = tempDir("berth-cli-data-")): BerthProcess {
  // No user configuration leaks into the test: the default config path is in an empty directory.
  const berth = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, ...args], {
    XDG_CONFIG_HOME: tempDir("berth-cli-config-"),
    BERTH_LOG_LEVEL: "info",
  });
  processes.push(berth);
  return berth;
}

async function sessions(url: string, token: string): Promise<SessionView[]> {
  const response = await fetch(`${url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } });
  return ((await response.json()) as { sessions: SessionView[] }).sessions;
}

describe("berth serve as a real process", () => {
  it("prints one clickable line, writes host.json, and on SIGTERM interrupts turns, stops every process and exits 0", async () => {
    const dataDir = tempDir("berth-cli-data-");
    const workDir = tempDir("berth-cli-work-");
    const berth = serve(["--release-grace", "30s"], dataDir);
    const { url, token, acpUrl } = await berth.startupLine();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(token).toBe(readFileSync(join(dataDir, "token"), "utf8"));
    expect(statSync(join(dataDir, "token")).mode & 0o777).toBe(0o600);
    const hostFile = JSON.parse(readFileSync(join(dataDir, "host.json"), "utf8")) as Record<string, unknown>;
    expect(hostFile).toEqual({ url, pid: berth.pid, startedAt: expect.any(Number) });

    const client = await AcpTestClient.connect(acpUrl, { token });
    const sleeper = await client.newSession(workDir);
    const sleeping = client.prompt(sleeper, "/sleep 1h");
    await client.waitForText(sleeper, "Sleeping for 1h.");
    const marker = `marker-${randomUUID()}`;
    const runner = await client.newSession(workDir);
    const running = client.prompt(runner, `/run sleep 3600 # ${marker}`);
    await waitUntil(() => pidsWithArgument(marker).length > 0, "the terminal command runs");
    const terminalGroup = processGroupOf(pidsWithArgument(marker)[0]!);
    const terminalProcesses = groupMembers(terminalGroup);
    const agents = (await sessions(url, token)).map((session) => session.pid!);
    expect(agents).toHaveLength(2);
    expect(agents.every((pid) => pid !== null)).toBe(true);
    spawned.push(...terminalProcesses, ...agents.map(startedProcess));
    const watcher = await RawSocket.open(acpUrl, token);
    const closedWith = new Promise<{ code: number; reason: string }>((resolve) =>
      watcher.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );

    berth.signal("SIGTERM");
    expect(await berth.exited).toEqual({ code: 0, signal: null });
    expect(await sleeping).toMatchObject({ stopReason: "cancelled" });
    // Every prompt running at the stop is answered before the sockets close (never the client's own "connection closed").
    expect(
      await running.then(
        (response) => response.stopReason,
        (error: Error) => error.message,
      ),
    ).not.toBe("ACP connection closed");
    expect(client.texts(sleeper)).toContain("Berth interrupted this turn (reason: shutdown): the host is shutting down.");
    expect(await closedWith).toEqual({ code: 1001, reason: "Berth is shutting down" });
    expect(await waitUntilGone([...agents, ...terminalProcesses.map((p) => p.pid)])).toEqual([]);
    expect(existsSync(join(dataDir, "host.json"))).toBe(false);

    const messages = berth.logLines().map((line) => line.msg);
    expect(messages).toEqual(
      expect.arrayContaining([
        "host started",
        "server listening",
        "client connected",
        "agent child acquired",
        "turn started",
        "session interrupted",
        "host stopped",
        "berth stopped",
      ]),
    );
  });

  it("on SIGTERM stops an agent that ignores the interrupt, and answers its prompt before the socket closes", async () => {
    const dataDir = tempDir("berth-cli-data-");
    const workDir = tempDir("berth-cli-work-");
    const config = join(tempDir("berth-cli-config-"), "config.json");
    writeFileSync(config, JSON.stringify({ interruptTimeout: "1s" }));
    const berth = serve(["--config", config], dataDir);
    const { url, token, acpUrl } = await berth.startupLine();
    const client = await AcpTestClient.connect(acpUrl, { token });
    const sessionId = await client.newSession(workDir);
    const stubborn = client.prompt(sessionId, "/sleep --ignore-cancel 1h");
    await client.waitForText(sessionId, "Sleeping for 1h.");
    const [agent] = (await sessions(url, token)).map((session) => session.pid!);
    spawned.push(startedProcess(agent!));
    berth.signal("SIGTERM");
    const outcome = await stubborn.then(
      (response) => `stopReason ${response.stopReason}`,
      (error: Error) => error.message,
    );
    // The agent was stopped (it ignored the cancel past interruptTimeout); its turn's end reached the client as an answer
    // that says so, not as its socket closing.
    expect(outcome).toBe("Internal error: the turn failed: the agent was stopped by Berth (unresponsive)");
    expect(await berth.exited).toEqual({ code: 0, signal: null });
    expect(await waitUntilGone([agent!])).toEqual([]);
    expect(berth.logLines().map((line) => line.msg)).toContain("host stopped");
  });

  it("refuses a bad configuration naming the key, exit code 2, nothing started", async () => {
    const dataDir = tempDir("berth-cli-data-");
    const config = join(tempDir("berth-cli-config-"), "config.json");
    writeFileSync(config, JSON.stringify({ releaseGrace: "soon", server: { port: 70000 } }));
    const bad = serve(["--config", config], dataDir);
    expect(await bad.exited).toEqual({ code: 2, signal: null });
    expect(bad.stderr).toContain(`invalid configuration in ${config}:`);
    expect(bad.stderr).toContain('releaseGrace: expected a duration such as "500ms", "15s", "60m", "24h" or "7d", got "soon"');
    expect(bad.stderr).toContain("server.port:");
    expect(bad.stdout).toBe("");
    expect(existsSync(join(dataDir, "host.json"))).toBe(false);
    expect(existsSync(join(dataDir, "berth.sqlite"))).toBe(false);

    const missing = serve(["--config", join(dataDir, "nope.json")]);
    expect(await missing.exited).toEqual({ code: 2, signal: null });
    expect(missing.stderr).toContain(`configuration file not found: ${join(dataDir, "nope.json")}`);
    const badFlag = serve(["--idle-ttl", "forever"]);
    expect(await badFlag.exited).toEqual({ code: 2, signal: null });
    expect(badFlag.stderr).toContain('--idle-ttl: expected a duration such as "500ms", "15s", "60m", "24h" or "7d", got "forever"');
    const badPort = new BerthProcess(["serve", "--port", "http"], { XDG_CONFIG_HOME: tempDir("berth-cli-config-") });
    processes.push(badPort);
    expect(await badPort.exited).toEqual({ code: 2, signal: null });
    expect(badPort.stderr).toContain('--port: expected a port number from 0 to 65535, got "http"');
  });

  it("a port in use is a clear error with exit code 1; so is a data directory another Berth serves", async () => {
    const blocker = createServer();
    blockers.push(blocker);
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDir = tempDir("berth-cli-data-");
    const clash = serve(["--port", String(port)], dataDir);
    expect(await clash.exited).toEqual({ code: 1, signal: null });
    expect(clash.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is already in use`);
    expect(existsSync(join(dataDir, "host.json"))).toBe(false);

    const first = serve([], dataDir);
    await first.startupLine();
    const second = serve([], dataDir);
    expect(await second.exited).toEqual({ code: 1, signal: null });
    expect(second.stderr).toContain(`Berth is already running on ${dataDir} (pid ${first.pid}`);
    first.signal("SIGINT");
    expect(await first.exited).toEqual({ code: 0, signal: null });
  });

  it("a second signal while stopping exits at once with code 130", async () => {
    const berth = serve(["--release-grace", "30s"]);
    const { url, token, acpUrl } = await berth.startupLine();
    const workDir = tempDir("berth-cli-work-");
    const client = await AcpTestClient.connect(acpUrl, { token });
    const sessionId = await client.newSession(workDir);
    // A command that ignores SIGTERM keeps the orderly stop busy for the whole stop timeout.
    const marker = `marker-${randomUUID()}`;
    void client.prompt(sessionId, `/run trap '' TERM; sleep 3600 # ${marker}`).catch(() => undefined);
    await waitUntil(() => pidsWithArgument(marker).length > 0, "the stubborn command runs");
    // Exiting at once leaves these behind (the next start reaps them); the test cleans them up.
    spawned.push(...groupMembers(processGroupOf(pidsWithArgument(marker)[0]!)));
    spawned.push(...(await sessions(url, token)).map((session) => startedProcess(session.pid!)));

    berth.signal("SIGTERM");
    await waitUntil(() => berth.stderr.includes("stopping: interrupting turns"), "the first signal started the stop");
    berth.signal("SIGTERM");
    expect(await berth.exited).toEqual({ code: 130, signal: null });
    expect(berth.stderr).toContain("second signal while stopping: exiting at once");
    // What the next start on this data directory would do: its processes and cgroups reaped.
    await ProcessScope.forDataDir(berth.dataDir!).reapAll({ graceMs: 1_000 });
  });
});
