import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { promisify } from "node:util";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findExecutable } from "../../src/processes/find-executable.js";
import { catalogueFixture } from "../agents/catalogue-fixture.js";
import { BerthProcess, cliMain } from "../server/serve-process.js";

const run = promisify(execFile);
let fixture: ReturnType<typeof catalogueFixture>;
let config: string;
let workDir: string;

async function berth(dataDir: string, ...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return berthWith({}, dataDir, ...args);
}

async function berthWith(env: Record<string, string>, dataDir: string, ...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cliMain, ...args, "--data-dir", dataDir, "--config", config], {
      env: { ...process.env, XDG_CONFIG_HOME: fixture.root, ...env },
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

function freshDataDir(): string {
  return mkdtempSync(join(fixture.root, "data-"));
}

function installedList(dataDir: string): Record<string, { version: string; distribution: string; command: string }> {
  return (JSON.parse(readFileSync(join(dataDir, "installed-agents.json"), "utf8")) as { agents: Record<string, never> }).agents;
}

beforeAll(() => {
  fixture = catalogueFixture();
  config = join(fixture.root, "config.json");
  writeFileSync(config, JSON.stringify({ agentRegistry: fixture.registry }));
  workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-agents-work-")));
});

afterAll(() => {
  rmSync(fixture.root, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
});

describe("berth agents with no host running: installs into the data directory", () => {
  it("adds the npm distribution from a packed tarball, lists it installed, and removes it", async () => {
    const dataDir = freshDataDir();
    // What `npx berth-acp` (npm exec) puts in the environment: npm's own settings, a global install among them.
    const npxPrefix = join(fixture.root, "npx-prefix");
    const added = await berthWith(
      { npm_config_global: "true", npm_config_prefix: npxPrefix, npm_command: "exec" },
      dataDir,
      "agents",
      "add",
      "fixture@1.0.0",
    );
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    expect(added.stdout).toContain("$ npm install --prefix");
    const entry = installedList(dataDir).fixture!;
    expect(entry).toMatchObject({
      version: "1.0.0",
      distribution: "npx",
      command: join(dataDir, "agents", "fixture", "1.0.0", "node_modules", ".bin", "fixture-acp-agent"),
    });
    expect(findExecutable(entry.command, "/", undefined)).toEqual({ path: entry.command });
    expect(statSync(join(dataDir, "installed-agents.json")).mode & 0o777).toBe(0o600);
    expect(existsSync(npxPrefix)).toBe(false);
    // As private as the rest of the data directory: a host started on it finds nothing to tighten.
    const open = readdirSync(join(dataDir, "agents"), { recursive: true, withFileTypes: true })
      .filter((file) => !file.isSymbolicLink() && (statSync(join(file.parentPath, file.name)).mode & 0o077) !== 0)
      .map((file) => join(file.parentPath, file.name));
    expect(open).toEqual([]);

    const listed = JSON.parse((await berth(dataDir, "agents", "--json")).stdout) as { agents: unknown[]; catalogue: unknown[] };
    expect(listed.agents).toEqual([
      { id: "demo", origin: "bundled", version: null, login: "unknown" },
      { id: "fixture", origin: "installed", version: "1.0.0", login: "unknown" },
    ]);
    expect(listed.catalogue).toContainEqual({
      id: "fixture",
      name: "Fixture agent",
      version: "1.0.0",
      description: "the demo agent, packaged",
      distributions: ["npx", "binary"],
      installed: "1.0.0",
    });
    const table = (await berth(dataDir, "agents")).stdout;
    expect(table).toMatch(/^fixture\s+installed\s+1\.0\.0\s+1\.0\.0\s+unknown$/m);
    expect(table).toMatch(/^broken\s+registry\s+-\s+2\.0\.0\s+-$/m);

    expect(await berth(dataDir, "agents", "add", "fixture")).toMatchObject({
      code: 1,
      stderr: 'berth agents add: agent "fixture" is already installed (version 1.0.0); upgrade it with `berth agents upgrade fixture`\n',
    });
    expect(await berth(dataDir, "agents", "remove", "fixture")).toEqual({ code: 0, stdout: "removed fixture\n", stderr: "" });
    expect(installedList(dataDir)).toEqual({});
    expect(existsSync(join(dataDir, "agents", "fixture"))).toBe(false);
  });

  it("adds the binary distribution after checking its sha256; a wrong sha256 is refused and leaves nothing behind", async () => {
    const dataDir = freshDataDir();
    const added = await berth(dataDir, "agents", "add", "fixture", "--from", "binary");
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`sha256 ${fixture.sha256} checked`);
    const command = join(dataDir, "agents", "fixture", "1.0.0", "bin", "fixture-agent");
    expect(installedList(dataDir).fixture).toMatchObject({ distribution: "binary", command });
    expect(existsSync(command)).toBe(true);
    // Nothing but the extracted archive: the download itself is gone.
    expect(existsSync(join(dataDir, "agents", "fixture", "1.0.0", ".download"))).toBe(false);

    const before = readFileSync(join(dataDir, "installed-agents.json"), "utf8");
    const refused = await berth(dataDir, "agents", "add", "broken");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `berth agents add: the sha256 of ${join(fixture.root, "registry", "fixture-agent.tar.gz")} is ${fixture.sha256}, the registry says ${"0".repeat(64)}: refused\n`,
    );
    expect(existsSync(join(dataDir, "agents", "broken"))).toBe(false);
    expect(readFileSync(join(dataDir, "installed-agents.json"), "utf8")).toBe(before);
  });

  it("upgrades to the registry's new version keeping the one it replaced; a failed upgrade leaves the installed version as it was", async () => {
    const dataDir = freshDataDir();
    const versions = () => readdirSync(join(dataDir, "agents", "fixture")).sort();
    try {
      expect((await berth(dataDir, "agents", "add", "fixture", "--from", "binary")).code).toBe(0);
      expect(await berth(dataDir, "agents", "upgrade", "fixture")).toMatchObject({
        code: 1,
        stderr: `berth agents upgrade: agent "fixture" is already at the registry's version 1.0.0\n`,
      });
      fixture.publish("1.1.0");
      const upgraded = await berth(dataDir, "agents", "upgrade", "fixture");
      expect(upgraded.code, upgraded.stderr).toBe(0);
      // The distribution it came from, and the replaced version kept for children still running from it.
      expect(installedList(dataDir).fixture).toMatchObject({ version: "1.1.0", distribution: "binary" });
      expect(versions()).toEqual(["1.0.0", "1.1.0"]);

      fixture.publish("1.2.0", "f".repeat(64));
      const before = readFileSync(join(dataDir, "installed-agents.json"), "utf8");
      expect((await berth(dataDir, "agents", "upgrade", "fixture")).stderr).toContain(`the registry says ${"f".repeat(64)}: refused`);
      expect(readFileSync(join(dataDir, "installed-agents.json"), "utf8")).toBe(before);
      expect(versions()).toEqual(["1.0.0", "1.1.0"]);

      fixture.publish("1.3.0");
      expect((await berth(dataDir, "agents", "upgrade", "fixture")).code).toBe(0);
      expect(versions()).toEqual(["1.1.0", "1.3.0"]);
      expect(JSON.parse((await berth(dataDir, "agents", "--json")).stdout).agents).toContainEqual({
        id: "fixture",
        origin: "installed",
        version: "1.3.0",
        login: "unknown",
      });
    } finally {
      fixture.publish("1.0.0");
    }
  });

  it("lists a configured agent over an installed one of the same id", async () => {
    const dataDir = freshDataDir();
    expect((await berth(dataDir, "agents", "add", "fixture", "--from", "binary")).code).toBe(0);
    const configured = join(fixture.root, "configured.json");
    writeFileSync(configured, JSON.stringify({ agentRegistry: fixture.registry, agents: { fixture: { command: "true" } } }));
    const saved = config;
    config = configured;
    try {
      expect(JSON.parse((await berth(dataDir, "agents", "--json")).stdout).agents).toEqual([
        { id: "demo", origin: "bundled", version: null, login: "unknown" },
        { id: "fixture", origin: "config", version: null, login: "unknown" },
      ]);
    } finally {
      config = saved;
    }
  });

  it("a damaged list of installed agents is named by the CLI; a host started on it logs it and runs its other agents", async () => {
    const dataDir = freshDataDir();
    const list = join(dataDir, "installed-agents.json");
    writeFileSync(list, "{ cut short", { mode: 0o600 });
    const listed = await berth(dataDir, "agents");
    expect(listed.code).toBe(1);
    expect(listed.stderr).toMatch(new RegExp(`^berth agents: ${list} is damaged \\(.+\\); remove it and install the agents again\n$`));
    expect((await berth(dataDir, "agents", "add", "fixture")).stderr).toContain(`${list} is damaged`);

    const host = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, "--config", config], { XDG_CONFIG_HOME: join(dataDir, "xdg") });
    try {
      const { url, token } = await host.startupLine();
      const agents = await fetch(`${url}/api/agents`, { headers: { authorization: `Bearer ${token}` } });
      expect(await agents.json()).toMatchObject({ agents: ["demo"] });
      await expect
        .poll(() => host.logLines())
        .toContainEqual(expect.objectContaining({ msg: "installed agents unreadable; only the configured agents are available" }));
    } finally {
      host.signal("SIGTERM");
      await host.exited;
      host.killGroup();
    }
  });

  it("a removal under a running host keeps the agent's files for its running session; the next start removes them", async () => {
    const dataDir = freshDataDir();
    expect((await berth(dataDir, "agents", "add", "fixture", "--from", "binary")).code).toBe(0);
    const serve = () =>
      new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, "--config", config], { XDG_CONFIG_HOME: join(dataDir, "xdg") });
    const stop = async (process: BerthProcess) => {
      process.signal("SIGTERM");
      await process.exited;
      process.killGroup();
    };
    const host = serve();
    const { url, token } = await host.startupLine();
    const bridge = spawn(process.execPath, [cliMain, "connect", "--data-dir", dataDir, "--config", config, "--agent", "fixture"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => bridge.once("exit", resolve));
    try {
      const connection = client({ name: "test-editor" }).connect(
        ndJsonStream(Writable.toWeb(bridge.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(bridge.stdout!) as ReadableStream<Uint8Array>),
      );
      await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId } = await connection.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
      const prompt = () => connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
      expect((await prompt()).stopReason).toBe("end_turn");
      const removed = await fetch(`${url}/api/agents/fixture`, { method: "DELETE", headers: { authorization: `Bearer ${token}` } });
      expect(removed.status).toBe(204);
      expect(installedList(dataDir)).toEqual({});
      expect(existsSync(join(dataDir, "agents", "fixture", "1.0.0", "bin", "fixture-agent"))).toBe(true);
      expect((await prompt()).stopReason).toBe("end_turn");
    } finally {
      bridge.stdin!.end();
      await exited;
      await stop(host);
    }
    const next = serve();
    try {
      await next.startupLine();
      expect(existsSync(join(dataDir, "agents", "fixture"))).toBe(false);
      await expect.poll(() => next.logLines()).toContainEqual(expect.objectContaining({ msg: "removed agents' files deleted", agents: ["fixture"] }));
    } finally {
      await stop(next);
    }
  });

  it("names what is wrong: an unknown id, an unknown version, a registry that cannot be read, uv missing", async () => {
    const dataDir = freshDataDir();
    expect(await berth(dataDir, "agents", "add", "nope")).toMatchObject({
      code: 1,
      stderr: `berth agents add: no agent "nope" in the agent registry ${fixture.registry} (it has: fixture, broken, snake)\n`,
    });
    expect(await berth(dataDir, "agents", "add", "fixture@9.9.9")).toMatchObject({
      code: 1,
      stderr: `berth agents add: no version "9.9.9" of agent "fixture" in the agent registry ${fixture.registry} (it has 1.0.0)\n`,
    });
    expect(await berth(dataDir, "agents", "upgrade", "fixture")).toMatchObject({
      code: 1,
      stderr: 'berth agents upgrade: agent "fixture" is not installed; add it with `berth agents add fixture`\n',
    });
    expect(await berth(dataDir, "agents", "remove", "fixture")).toMatchObject({
      code: 1,
      stderr: 'berth agents remove: agent "fixture" is not installed (installed: none)\n',
    });
    // Names an object has of its own are not installed agents.
    for (const id of ["toString", "constructor", "__proto__"])
      expect(await berth(dataDir, "agents", "remove", id)).toMatchObject({
        code: 1,
        stderr: `berth agents remove: agent "${id}" is not installed (installed: none)\n`,
      });
    expect(await berth(dataDir, "agents", "add", "fixture", "--from", "pip")).toMatchObject({
      code: 2,
      stderr: 'berth agents add: --from: expected npx, binary or uvx, got "pip"\n',
    });
    if (!("path" in findExecutable("uv", "/", process.env.PATH)))
      expect(await berth(dataDir, "agents", "add", "snake")).toMatchObject({
        code: 1,
        stderr: 'berth agents add: the uvx distribution of "snake" needs uv (https://docs.astral.sh/uv/), which is not on PATH\n',
      });
    const missing = join(fixture.root, "missing.json");
    const otherConfig = join(fixture.root, "missing-registry.json");
    writeFileSync(otherConfig, JSON.stringify({ agentRegistry: missing }));
    const saved = config;
    config = otherConfig;
    try {
      expect(await berth(dataDir, "agents", "add", "fixture")).toMatchObject({
        code: 1,
        stderr: `berth agents add: cannot read the agent registry ${missing}: ENOENT\n`,
      });
      const listed = await berth(dataDir, "agents");
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(`cannot read the agent registry ${missing}: ENOENT`);
      // A version is a folder's name in the data directory: one that is a path is refused with the registry.
      writeFileSync(
        missing,
        JSON.stringify({ agents: [{ id: "fixture", name: "F", version: "../../escape", distribution: { npx: { package: "x" } } }] }),
      );
      expect(await berth(dataDir, "agents", "add", "fixture")).toMatchObject({
        code: 1,
        stderr: `berth agents add: the agent registry ${missing} is not in the ACP Agent Registry format: agents.0.version: expected a version such as 1.2.3 (letters, digits, '.', '+', '_', '-')\n`,
      });
    } finally {
      config = saved;
    }
    expect(existsSync(join(dataDir, "agents"))).toBe(false);
  });
});

describe("berth agents with a host running: installs through its REST API, used at once", () => {
  let dataDir: string;
  let host: BerthProcess;
  let base: { url: string; token: string };

  const rest = async (path: string, init: { method?: string; body?: unknown } = {}) => {
    const response = await fetch(`${base.url}${path}`, {
      method: init.method ?? "GET",
      headers: { authorization: `Bearer ${base.token}`, "content-type": "application/json" },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: response.status, body: response.status === 204 ? undefined : ((await response.json()) as Record<string, unknown>) };
  };

  beforeAll(async () => {
    dataDir = freshDataDir();
    mkdirSync(join(dataDir, "xdg"));
    host = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, "--config", config], { XDG_CONFIG_HOME: join(dataDir, "xdg") });
    base = await host.startupLine();
  });

  afterAll(async () => {
    host.signal("SIGTERM");
    await host.exited;
    host.killGroup();
  });

  it("adds an agent a session then runs, prompted through the host, and removes it", async () => {
    const added = await berth(dataDir, "agents", "add", "fixture");
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    expect(added.stdout).toContain("$ npm install --prefix");
    expect(added.stdout).toContain("installed 1.0.0; the host runs it from now on\n");
    expect((await rest("/api/agents")).body).toEqual({
      agents: ["demo", "fixture"],
      default: "demo",
      details: [
        { id: "demo", origin: "bundled", version: null, login: "unknown" },
        { id: "fixture", origin: "installed", version: "1.0.0", login: "unknown" },
      ],
    });
    expect((await rest("/api/agents/catalogue")).body).toMatchObject({
      registry: fixture.registry,
      agents: [
        {
          id: "fixture",
          name: "Fixture agent",
          version: "1.0.0",
          description: "the demo agent, packaged",
          distributions: ["npx", "binary"],
          installed: "1.0.0",
        },
        { id: "broken", installed: null },
        { id: "snake", distributions: ["uvx"], installed: null },
      ],
    });

    // An editor bound to the installed agent: the host starts it from the data directory and it answers a prompt.
    const bridge = spawn(process.execPath, [cliMain, "connect", "--data-dir", dataDir, "--config", config, "--agent", "fixture"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const connection = client({ name: "test-editor" }).connect(
      ndJsonStream(Writable.toWeb(bridge.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(bridge.stdout!) as ReadableStream<Uint8Array>),
    );
    const exited = new Promise((resolve) => bridge.once("exit", resolve));
    try {
      await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId } = await connection.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
      const { stopReason } = await connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
      expect(stopReason).toBe("end_turn");
      const session = (await rest(`/api/sessions/${sessionId}`)).body as { agent: string; pid: number };
      expect(session.agent).toBe("fixture");
      const cmdline = readFileSync(`/proc/${session.pid}/cmdline`, "utf8");
      expect(cmdline).toContain(join(dataDir, "agents", "fixture", "1.0.0"));
    } finally {
      bridge.stdin!.end();
      await exited;
    }

    expect(await berth(dataDir, "agents", "add", "fixture")).toMatchObject({
      code: 1,
      stderr: 'berth agents add: agent "fixture" is already installed (version 1.0.0); upgrade it with `berth agents upgrade fixture`\n',
    });
    expect(await berth(dataDir, "agents", "add", "nope")).toMatchObject({
      code: 1,
      stderr: `berth agents add: no agent "nope" in the agent registry ${fixture.registry} (it has: fixture, broken, snake)\n`,
    });
    expect(await berth(dataDir, "agents", "remove", "fixture")).toEqual({ code: 0, stdout: "removed fixture\n", stderr: "" });
    expect((await rest("/api/agents")).body).toMatchObject({ agents: ["demo"] });
    expect(await rest("/api/agents/fixture", { method: "DELETE" })).toMatchObject({ status: 404, body: { error: "agent_not_installed" } });
    for (const id of ["toString", "constructor", "__proto__"])
      expect(await rest(`/api/agents/${id}`, { method: "DELETE" })).toMatchObject({ status: 404, body: { error: "agent_not_installed" } });
  });

  it("POST /api/agents/installs refuses what it cannot install, and streams a failed install's reason", async () => {
    expect(await rest("/api/agents/installs", { method: "POST", body: { id: "nope" } })).toMatchObject({
      status: 404,
      body: { error: "agent_not_in_registry" },
    });
    expect(await rest("/api/agents/installs", { method: "POST", body: { id: "fixture", version: "3" } })).toMatchObject({
      status: 404,
      body: { error: "version_not_in_registry" },
    });
    expect(await rest("/api/agents/installs", { method: "POST", body: { id: "fixture", mode: "later" } })).toMatchObject({
      status: 400,
      body: { error: "invalid_body" },
    });
    const started = await rest("/api/agents/installs", { method: "POST", body: { id: "broken" } });
    expect(started.status).toBe(202);
    const events = await fetch(`${base.url}/api/agents/installs/${started.body!.id as string}/events`, {
      headers: { authorization: `Bearer ${base.token}` },
    });
    expect(events.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const text = await events.text();
    expect(text).toContain('event: progress\ndata: {"line":"installing broken 2.0.0 (binary)');
    expect(text).toContain(
      `event: failed\ndata: {"reason":"the sha256 of ${join(fixture.root, "registry", "fixture-agent.tar.gz")} is ${fixture.sha256}`,
    );
    expect(existsSync(join(dataDir, "agents", "broken"))).toBe(false);
    expect(await rest("/api/agents/installs/none/events")).toMatchObject({ status: 404, body: { error: "install_not_found" } });
  });
});
