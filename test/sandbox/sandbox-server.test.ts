import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { initRepository } from "../git/git-repository.js";
import { AcpTestClient, cleanUp, startFixture } from "../server/server-harness.js";
import { BerthProcess, cliMain } from "../server/serve-process.js";

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
  it("sandboxes its sessions: writes land in the session's directory alone, berth status says sandboxes are available", async () => {
    const root = realpathSync(mkdtempSync("/var/tmp/berth-nobody-"));
    const home = join(root, "home");
    const dataDir = join(root, "data");
    const workDir = join(root, "work");
    for (const dir of [home, dataDir, workDir]) mkdirSync(dir);
    for (const dir of [root, home, dataDir, workDir]) chownSync(dir, nobody(), nobody());
    // runuser sets nobody's own HOME (/nonexistent): env sets the test's, then execs node (the pid stays the host's).
    const wrapper = ["runuser", "-u", "nobody", "--", "env", `HOME=${home}`, `XDG_CONFIG_HOME=${home}`];
    // Its configuration file, even inside the session's directory, is hidden from the sandbox: it may hold secrets.
    const configFile = join(workDir, "berth.json");
    writeFileSync(configFile, JSON.stringify({ releaseGrace: "15s" }));
    chownSync(configFile, nobody(), nobody());
    const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, "--config", configFile], {}, wrapper);
    try {
      const { token, acpUrl, url } = await server.startupLine();
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
    } finally {
      server.signal("SIGTERM");
      await server.exited;
      server.killGroup();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

function nobody(): number {
  return Number(spawnSync("id", ["-u", "nobody"], { encoding: "utf8" }).stdout.trim());
}
