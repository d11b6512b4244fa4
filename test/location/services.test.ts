import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ServiceConfig } from "../../src/config/config-schema.js";
import { InMemoryProcessGroupLedger, type LedgerEntry } from "../../src/processes/ledger.js";
import { ServiceProcesses, ServicesClosedError, type ServiceProcessesOptions } from "../../src/location/service-processes.js";
import { groupMembers, killLeftovers, processIsRunning, startedProcess, waitUntil, type StartedProcess } from "../support/process-table.js";

let directory: string;
let pidsFile: string;
const opened: ServiceProcesses[] = [];
const started: StartedProcess[] = [];

/**
 * An HTTP server on `PORT` that answers every request with what it was started
 * with, keeps a `sleep` grandchild in its group, writes both pids to `PIDS_FILE`
 * (one JSON line per start), and exits with code 7 after answering `/exit`.
 */
const HTTP_SERVICE = `
import { createServer } from "node:http";
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
const sleeper = spawn("sleep", ["3600"], { stdio: "ignore" });
appendFileSync(process.env.PIDS_FILE, JSON.stringify({ pid: process.pid, sleeper: sleeper.pid }) + "\\n");
const server = createServer((request, response) => {
  if (request.url === "/exit") {
    response.end("bye", () => process.exit(7));
    return;
  }
  response.setHeader("content-type", "application/json");
  response.end(JSON.stringify({
    url: request.url,
    argv: process.argv.slice(2),
    port: process.env.PORT,
    greeting: process.env.GREETING,
    cwd: process.cwd(),
  }));
});
server.listen(Number(process.env.PORT), "127.0.0.1");
`;

/** A ledger that also remembers every group it was ever told about, for checks and clean-up. */
class WatchingLedger extends InMemoryProcessGroupLedger {
  readonly everAdded: LedgerEntry[] = [];

  override add(group: LedgerEntry): void {
    super.add(group);
    this.everAdded.push(group);
    started.push(startedProcess(group.pgid));
  }
}

interface LogLine {
  readonly line: string;
  readonly fields: Record<string, unknown>;
}

function servicesWith(
  services: Record<string, ServiceConfig>,
  options: Partial<ServiceProcessesOptions> = {},
): { services: ServiceProcesses; ledger: WatchingLedger; logs: LogLine[] } {
  const ledger = new WatchingLedger();
  const logs: LogLine[] = [];
  const created = new ServiceProcesses({
    services,
    cwd: directory,
    ledger,
    log: (line, fields) => logs.push({ line, fields }),
    stopTimeoutMs: 2_000,
    ...options,
  });
  opened.push(created);
  return { services: created, ledger, logs };
}

function httpService(overrides: Partial<ServiceConfig> = {}): ServiceConfig {
  return {
    command: process.execPath,
    args: [join(directory, "http-service.mjs"), "--listen={port}"],
    env: { PIDS_FILE: pidsFile, GREETING: "hello on {port}" },
    port: "auto",
    mcp: { type: "http", path: "/mcp" },
    readyTimeout: 20_000,
    ...overrides,
  };
}

function shellService(script: string, overrides: Partial<ServiceConfig> = {}): ServiceConfig {
  return { command: "sh", args: ["-c", script], env: {}, readyTimeout: 20_000, ...overrides };
}

/** The pids each start of the HTTP service wrote, remembered for clean-up. */
function startsOfHttpService(): { pid: number; sleeper: number }[] {
  const starts = readFileSync(pidsFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { pid: number; sleeper: number });
  for (const { sleeper } of starts) if (processIsRunning(sleeper)) started.push(startedProcess(sleeper));
  return starts;
}

async function fetchJson(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

function onlyGroup(ledger: WatchingLedger): LedgerEntry {
  expect(ledger.everAdded).toHaveLength(1);
  return ledger.everAdded[0]!;
}

beforeEach(() => {
  directory = realpathSync(mkdtempSync(join(tmpdir(), "berth-services-")));
  pidsFile = join(directory, "pids.jsonl");
  writeFileSync(join(directory, "http-service.mjs"), HTTP_SERVICE);
});

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((services) => services.stopAll()));
  killLeftovers(started.splice(0));
  rmSync(directory, { recursive: true, force: true });
});

describe("ServiceProcesses: an HTTP service on an allocated port", () => {
  it("waits until it listens, gives its MCP URL, and runs it in the location with {port} and PORT set", async () => {
    const { services } = servicesWith({ tools: httpService() });
    await services.ensureStarted();

    const [info] = services.list();
    expect(info).toMatchObject({ name: "tools", state: "ready" });
    const port = info!.port!;
    expect(port).toBeGreaterThan(0);
    expect(services.mcpServers()).toEqual([{ type: "http", name: "tools", url: `http://127.0.0.1:${port}/mcp`, headers: [] }]);
    const answer = await fetchJson(services.mcpServers()[0]!.url);
    expect(answer).toEqual({
      url: "/mcp",
      argv: [`--listen=${port}`],
      port: String(port),
      greeting: `hello on ${port}`,
      cwd: directory,
    });
    expect(startsOfHttpService()).toEqual([{ pid: info!.pid, sleeper: expect.any(Number) }]);
  });

  it("starts once for concurrent callers", async () => {
    const { services, ledger } = servicesWith({ tools: httpService() });
    await Promise.all([services.ensureStarted(), services.ensureStarted(), services.ensureStarted()]);
    await services.ensureStarted();

    expect(onlyGroup(ledger).label).toBe("service tools");
    expect(startsOfHttpService()).toHaveLength(1);
  });

  it("stopAll stops the service's whole group, grandchild included, and nothing starts again", async () => {
    const { services, ledger, logs } = servicesWith({ tools: httpService() });
    await services.ensureStarted();
    const [{ pid, sleeper }] = startsOfHttpService() as [{ pid: number; sleeper: number }];
    expect(groupMembers(pid).map((member) => member.pid)).toEqual(expect.arrayContaining([pid, sleeper]));

    await services.stopAll();

    expect(processIsRunning(pid)).toBe(false);
    expect(processIsRunning(sleeper)).toBe(false);
    expect(ledger.list()).toEqual([]);
    expect(services.list()).toMatchObject([{ name: "tools", state: "stopped" }]);
    expect(services.mcpServers()).toEqual([]);
    expect(logs.map(({ line }) => line)).toContain("service stopped");
    await services.stopAll();
    await expect(services.ensureStarted()).rejects.toThrow(ServicesClosedError);
    await expect(services.ensureStarted()).rejects.toThrow(/location services closed/);
    expect(ledger.everAdded).toHaveLength(1);
  });

  it("notices a service that exits once ready, stops what it left, and restarts it on the next start", async () => {
    const { services, ledger, logs } = servicesWith({ tools: httpService() });
    await services.ensureStarted();
    const first = services.list()[0]!;
    const [{ sleeper }] = startsOfHttpService() as [{ pid: number; sleeper: number }];

    await fetch(`http://127.0.0.1:${first.port}/exit`).then((response) => response.text());
    await waitUntil(() => services.list()[0]?.state === "exited", "the service is seen to exit");
    expect(logs).toContainEqual({
      line: "service exited (exit code 7)",
      fields: expect.objectContaining({ service: "tools", directory, exitCode: 7, signal: null, pid: first.pid }),
    });
    expect(services.mcpServers()).toEqual([]);
    await waitUntil(() => !processIsRunning(sleeper), "the grandchild it left in its group is stopped");

    await services.ensureStarted();
    const second = services.list()[0]!;
    expect(second.state).toBe("ready");
    expect(second.pid).not.toBe(first.pid);
    expect(await fetchJson(services.mcpServers()[0]!.url)).toMatchObject({ port: String(second.port) });
    expect(ledger.everAdded.map((group) => group.pgid)).toEqual([first.pid, second.pid]);
    expect(startsOfHttpService()).toHaveLength(2);
  });
});

describe("ServiceProcesses: services that do not become ready", () => {
  it("a service that exits at once fails with its exit code and the tail of its stderr", async () => {
    const failing = shellService("echo 'reading config' >&2; echo 'fatal: no such key: api_token' >&2; exit 3", {
      port: "auto",
    });
    const { services, ledger } = servicesWith({ broken: failing });

    const error = await services.ensureStarted().then(
      () => undefined,
      (reason: unknown) => reason as Error,
    );
    expect(error?.message).toMatch(/^service "broken" exited \(exit code 3\) before it accepted connections on [\d.:]+;/);
    expect(error?.message).toContain("stderr ends with:\nreading config\nfatal: no such key: api_token");
    expect(services.list()).toMatchObject([{ name: "broken", state: "failed" }]);
    expect(groupMembers(onlyGroup(ledger).pgid)).toEqual([]);
    expect(ledger.list()).toEqual([]);
  });

  it("quotes only the end of a long stderr", async () => {
    const noise = "head -c 200000 /dev/zero | tr '\\0' x >&2; echo >&2";
    const chatty = shellService(`${noise}; echo 'the real reason' >&2; exit 2`, { port: "auto" });
    const { services } = servicesWith({ chatty });
    const error = await services.ensureStarted().then(
      () => undefined,
      (reason: unknown) => reason as Error,
    );
    expect(error?.message).toMatch(/^service "chatty" exited \(exit code 2\) [\s\S]*\nthe real reason$/);
    expect(error?.message.length).toBeLessThan(2_500);
  });

  it("a service that never listens fails after its ready timeout, and its whole group is stopped", async () => {
    const silent = shellService('echo "sleeper $$" >&2; sleep 3600 & wait', { port: "auto", readyTimeout: 300 });
    const { services, ledger } = servicesWith({ silent });

    const error = await services.ensureStarted().then(
      () => undefined,
      (reason: unknown) => reason as Error,
    );
    const port = services.list()[0]?.port;
    expect(error?.message).toContain(`service "silent" did not accept connections on 127.0.0.1:${port} within 300 ms`);
    expect(error?.message).toMatch(/stderr ends with:\nsleeper \d+/);
    const group = onlyGroup(ledger);
    expect(groupMembers(group.pgid)).toEqual([]);
    expect(processIsRunning(group.pgid)).toBe(false);
    expect(services.list()).toMatchObject([{ name: "silent", state: "failed" }]);
  });

  it("a command that cannot start fails naming the service and the command", async () => {
    const { services } = servicesWith({ missing: shellService("", { command: join(directory, "no-such-server") }) });
    await expect(services.ensureStarted()).rejects.toThrow(
      /^service "missing" could not start: cannot start command ".*no-such-server": no such command \(ENOENT\)$/,
    );
  });

  it("a failed service is started again by the next start, while a healthy one stays as it is", async () => {
    const secondAttempt = 'if [ -e second-attempt ]; then exec "$NODE" http-service.mjs; fi';
    const firstAttempt = "touch second-attempt; echo 'first attempt fails' >&2; exit 1";
    const flaky = shellService(`${secondAttempt}; ${firstAttempt}`, {
      port: "auto",
      env: { NODE: process.execPath, PIDS_FILE: pidsFile },
    });
    const { services, ledger } = servicesWith({ tools: httpService(), flaky });

    const firstError = /^service "flaky" exited \(exit code 1\) [\s\S]*first attempt fails$/;
    await expect(services.ensureStarted()).rejects.toThrow(firstError);
    const tools = services.list().find(({ name }) => name === "tools")!;
    expect(tools.state).toBe("ready");

    await services.ensureStarted();
    expect(services.list()).toEqual([{ ...tools }, { name: "flaky", pid: expect.any(Number), port: expect.any(Number), state: "ready" }]);
    const labels = ledger.everAdded.map((group) => group.label).sort();
    expect(labels).toEqual(["service flaky", "service flaky", "service tools"]);
    startsOfHttpService();
  });

  it("stopAll calls off a start under way: the start fails as closed and the group is gone", async () => {
    const { services, ledger } = servicesWith({ slow: shellService("sleep 3600 & wait", { port: "auto" }) });
    const outcome = services.ensureStarted().then(
      () => "ready",
      (reason: unknown) => reason,
    );
    await waitUntil(() => ledger.everAdded.length === 1, "the service was spawned");

    await services.stopAll();

    expect(await outcome).toBeInstanceOf(ServicesClosedError);
    expect(groupMembers(onlyGroup(ledger).pgid)).toEqual([]);
    expect(services.list()).toMatchObject([{ name: "slow", state: "stopped" }]);
  });

  it("a service without a port is ready once spawned and offers no MCP server", async () => {
    const { services, ledger } = servicesWith({ browser: shellService("sleep 3600") });
    await services.ensureStarted();
    const { pgid } = onlyGroup(ledger);
    expect(services.list()).toEqual([{ name: "browser", pid: pgid, port: undefined, state: "ready" }]);
    expect(services.mcpServers()).toEqual([]);
    await services.stopAll();
    expect(processIsRunning(pgid)).toBe(false);
  });
});

describe("ServiceProcesses: configuration it cannot run", () => {
  it.each([
    [{ args: ["--port={port}"] }, /service "bad": uses \{port\} in its args or env but has no port: "auto"/],
    [{ env: { URL: "http://127.0.0.1:{port}" } }, /service "bad": uses \{port\}/],
    [{ mcp: { type: "http" as const, path: "/mcp" } }, /service "bad": mcp needs port: "auto"/],
    [{ port: "auto" as const, mcp: { type: "http" as const, path: "mcp" } }, /"bad": mcp path must start with "\/"/],
    [{ readyTimeout: 0 }, /service "bad": readyTimeout must be a positive number/],
  ])("refuses %j", (overrides, message) => {
    const services = { bad: shellService("true", overrides) };
    expect(() => new ServiceProcesses({ services, cwd: directory })).toThrow(message);
  });
});
