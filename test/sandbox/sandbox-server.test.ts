import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RequestError } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { initRepository } from "../git/git-repository.js";
import { AcpTestClient, cleanUp, startFixture } from "../server/server-harness.js";
import { BerthProcess, cliMain } from "../server/serve-process.js";
import { allProcesses, readCmdline, waitUntil, waitUntilGone } from "../support/process-table.js";

afterEach(cleanUp);

const post = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("sandboxes through the server", () => {
  it("without bubblewrap: REST 400 sandbox_unavailable and ACP -32602, each with the fix; GET /api/sandbox says why", async () => {
    const fixture = await startFixture({ config: { sandbox: { bwrap: "/nonexistent/bwrap" } } });
    const status = await fixture.api("/api/sandbox");
    expect(await status.json()).toMatchObject({
      state: "unavailable",
      reason: expect.stringMatching(/not found/),
      fix: expect.stringMatching(/apt-get install bubblewrap/),
    });

    const refused = await fixture.api("/api/sessions", post({ cwd: fixture.workDir, sandbox: { mode: "workspace-write" } }));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: "sandbox_unavailable",
      message: expect.stringMatching(/asks for a sandbox, but .*apt-get install bubblewrap/),
    });
    const invalid = await fixture.api("/api/sessions", post({ cwd: fixture.workDir, sandbox: { mode: "workspace-write", network: "maybe" } }));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ error: "invalid_sandbox", message: 'sandbox.network: expected "on" or "off", got "maybe"' });

    const client = await fixture.connect();
    const error = await client.newSession(fixture.workDir, { "berth/sandbox": { mode: "workspace-write" } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RequestError);
    expect(error).toMatchObject({ code: -32602, message: expect.stringMatching(/apt-get install bubblewrap/) });
    const list = (await (await fixture.api("/api/sessions")).json()) as { sessions: SessionView[] };
    expect(list.sessions).toEqual([]);
  });

  it("a client's session/new _meta asks for one; the session view carries it; the client cannot loosen the configured one", async () => {
    const fixture = await startFixture({ config: { sandbox: { network: "off" } } });
    const client = await fixture.connect();
    const id = await client.newSession(fixture.workDir, { "berth/sandbox": { mode: "workspace-write" } });
    const view = (await (await fixture.api(`/api/sessions/${id}`)).json()) as SessionView;
    expect(view.sandbox).toMatchObject({ mode: "workspace-write", network: "off", writable: expect.arrayContaining([fixture.workDir]) });
    const loosened = await client
      .newSession(fixture.workDir, { "berth/sandbox": { mode: "workspace-write", network: "on" } })
      .catch((caught: unknown) => caught);
    expect(loosened).toMatchObject({ code: -32602, message: expect.stringMatching(/_meta\["berth\/sandbox"\]\.network: "on" is refused/) });
  });

  it("a session in a configured location gets its sandbox unasked, its binds writable, a worktree of its repository too; off is refused there", async () => {
    // Outside /tmp (every sandbox has a private /tmp): a write outside must be refused, not kept in a private copy.
    const root = realpathSync(mkdtempSync("/var/tmp/berth-sandbox-location-"));
    try {
      const clientX = join(root, "client-x");
      const app = join(clientX, "app");
      const cache = join(root, "cache");
      const elsewhere = join(root, "elsewhere");
      const repo = join(clientX, "repo");
      for (const dir of [app, cache, elsewhere, repo]) mkdirSync(dir, { recursive: true });
      const location = { mode: "workspace-write" as const, network: "off" as const, binds: [cache] };
      const fixture = await startFixture({ config: { sandbox: { locations: { [clientX]: location } } }, workDir: app });

      const created = await fixture.api("/api/sessions", post({ cwd: app }));
      expect(created.status).toBe(201);
      expect(((await created.json()) as SessionView).sandbox).toMatchObject({
        mode: "workspace-write",
        network: "off",
        writable: expect.arrayContaining([app, cache]),
      });
      const outside = (await (await fixture.api("/api/sessions", post({ cwd: elsewhere }))).json()) as SessionView;
      expect(outside.sandbox).toBeNull();
      const refused = await fixture.api("/api/sessions", post({ cwd: app, sandbox: { mode: "off" } }));
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({
        error: "invalid_sandbox",
        message: `sandbox.mode: "off" is refused: this host's configuration sandboxes this agent in ${clientX} (sandbox.locations) (mode "workspace-write")`,
      });
      // A worktree lies in Berth's data directory, outside the location: its repository's location decides.
      const repository = initRepository(repo);
      const inWorktree = (await (await fixture.api("/api/sessions", post({ cwd: repository, worktree: {} }))).json()) as SessionView;
      expect(inWorktree.cwd.startsWith(clientX)).toBe(false);
      expect(inWorktree.sandbox).toMatchObject({ mode: "workspace-write", writable: expect.arrayContaining([inWorktree.cwd, cache]) });

      const client = await fixture.connect();
      const id = await client.newSession(app);
      await client.prompt(
        id,
        `/run echo in > ${join(app, "inside.txt")}; echo bound > ${join(cache, "bound.txt")}; echo out > ${join(elsewhere, "outside.txt")}`,
      );
      expect(readFileSync(join(app, "inside.txt"), "utf8")).toBe("in\n");
      expect(readFileSync(join(cache, "bound.txt"), "utf8")).toBe("bound\n");
      expect(existsSync(join(elsewhere, "outside.txt"))).toBe(false);
      const loosened = await client.newSession(app, { "berth/sandbox": { mode: "off" } }).catch((caught: unknown) => caught);
      expect(loosened).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/_meta\["berth\/sandbox"\]\.mode: "off" is refused: .* in .*client-x \(sandbox\.locations\)/),
      });
      await client.close();
      await fixture.stop();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/**
 * Whether this test can run a host as another user: as root, with `runuser`, where `nobody` can run this node and read
 * the built CLI (a checkout under a private home cannot be read by others).
 */
const asNobody =
  process.getuid?.() === 0 &&
  spawnSync("runuser", ["-u", "nobody", "--", process.execPath, "-e", `require("fs").accessSync(${JSON.stringify(cliMain)})`]).status === 0;

describe.skipIf(!asNobody)("a host run as nobody", () => {
  /** A real `berth serve` run as `nobody` in a home of its own, with `config` as its configuration file's. */
  async function hostAsNobody(config: object, configInWorkDir = false) {
    const root = realpathSync(mkdtempSync("/var/tmp/berth-nobody-"));
    roots.push(root);
    const home = join(root, "home");
    const dataDir = join(root, "data");
    const workDir = join(root, "work");
    for (const dir of [home, dataDir, workDir]) mkdirSync(dir);
    for (const dir of [root, home, dataDir, workDir]) chownSync(dir, nobody(), nobody());
    // runuser sets nobody's own HOME (/nonexistent): env sets the test's, then execs node (the pid stays the host's).
    const wrapper = ["runuser", "-u", "nobody", "--", "env", `HOME=${home}`, `XDG_CONFIG_HOME=${home}`];
    const configFile = join(configInWorkDir ? workDir : home, "berth.json");
    writeFileSync(configFile, JSON.stringify(config));
    chownSync(configFile, nobody(), nobody());
    const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, "--config", configFile], {}, wrapper);
    servers.push(server);
    return { root, home, workDir, configFile, ...(await server.startupLine()) };
  }

  /** A directory of `root` that nobody owns. */
  function ownedDir(root: string, name: string): string {
    const dir = join(root, name);
    mkdirSync(dir);
    chownSync(dir, nobody(), nobody());
    return dir;
  }

  const roots: string[] = [];
  const servers: BerthProcess[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.signal("SIGTERM");
      await server.exited;
      server.killGroup();
    }
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  it("sandboxes its sessions: writes land in the session's directory alone, berth status says sandboxes are available", async () => {
    // Its configuration file, even inside the session's directory, is hidden from the sandbox: it may hold secrets.
    const { home, workDir, configFile, token, acpUrl, url } = await hostAsNobody({ releaseGrace: "15s" }, true);
    const client = await AcpTestClient.connect(acpUrl, { token });
    const id = await client.newSession(workDir, { "berth/sandbox": { mode: "workspace-write" } });
    await client.prompt(id, `/run echo in > ${join(workDir, "inside.txt")}; echo out > ${join(home, "outside.txt")}`);
    expect(readFileSync(join(workDir, "inside.txt"), "utf8")).toBe("in\n");
    expect(existsSync(join(home, "outside.txt"))).toBe(false);
    await client.prompt(id, `/run cat ${configFile} > ${join(workDir, "config-copy.txt")}`);
    expect(readFileSync(join(workDir, "config-copy.txt"), "utf8")).toBe("");
    await client.close();

    const status = spawnSync(process.execPath, [cliMain, "status", "--url", url, "--token", token], { encoding: "utf8", timeout: 20_000 });
    expect(status.stdout).toMatch(/^Sandboxes: available \(.*bwrap\)$/m);
  });

  it("as nobody too: ~/.ssh and another session's directory refuse writes, a secret stays unread, network off reaches nothing, the location's service runs in a namespace of its own, DELETE stops a setsid daemon", async () => {
    const service = fileURLToPath(new URL("./fixtures/ns-service.mjs", import.meta.url));
    const { root, home, workDir, token, acpUrl, url } = await hostAsNobody({
      services: { web: { command: process.execPath, args: [service], port: "auto", mcp: { type: "http", path: "/mcp" } } },
    });
    const ssh = ownedDir(home, ".ssh");
    writeFileSync(join(ssh, "id_test"), "SECRET-KEY-MATERIAL");
    chownSync(join(ssh, "id_test"), nobody(), nobody());
    const otherDir = ownedDir(root, "other");
    const listener = createServer((socket) => socket.on("error", () => undefined).end("hello\n"));
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    try {
      const port = (listener.address() as AddressInfo).port;
      const client = await AcpTestClient.connect(acpUrl, { token });
      await client.newSession(otherDir, { "berth/sandbox": { mode: "workspace-write" } });
      const id = await client.newSession(workDir, { "berth/sandbox": { mode: "workspace-write", network: "off" } });
      const outcome = (name: string) => readFileSync(join(workDir, name), "utf8");

      await client.prompt(id, `/run echo x > ${join(ssh, "planted")}; echo $? > ssh.txt; echo x > ${join(otherDir, "planted")}; echo $? > other.txt`);
      expect(outcome("ssh.txt")).not.toBe("0\n");
      expect(outcome("other.txt")).not.toBe("0\n");
      expect(existsSync(join(ssh, "planted"))).toBe(false);
      expect(existsSync(join(otherDir, "planted"))).toBe(false);
      await client.prompt(id, `/run cat ${join(ssh, "id_test")} > secret.txt`);
      expect(outcome("secret.txt")).not.toContain("SECRET-KEY-MATERIAL");
      const connect = `require('net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(3))`;
      await client.prompt(id, `/run ${process.execPath} -e "${connect}"; echo $? > net.txt`);
      expect(outcome("net.txt")).toBe("3\n");
      // The service the location started for the session: its own PID namespace, and no write to the home.
      const view = JSON.parse(outcome("service-view.json")) as { pidNamespace: string; home: string };
      expect(view.pidNamespace).not.toBe(readlinkSync("/proc/self/ns/pid"));
      expect(existsSync(join(home, "service-was-here"))).toBe(false);

      const marker = `3600.${process.pid}9`;
      const turn = client.prompt(id, `/run setsid -f sleep ${marker}; sleep 3600`).catch(() => undefined);
      const daemons = () => allProcesses().filter((pid) => readCmdline(pid) === `sleep\0${marker}\0`);
      await waitUntil(() => daemons().length === 1, "the setsid daemon runs");
      const daemon = daemons()[0]!;
      const deleted = await fetch(`${url}/api/sessions/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${token}` } });
      expect(deleted.status).toBe(204);
      await turn;
      expect(await waitUntilGone([daemon], 15_000)).toEqual([]);
      await client.close();
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });
});

function nobody(): number {
  return Number(spawnSync("id", ["-u", "nobody"], { encoding: "utf8" }).stdout.trim());
}
