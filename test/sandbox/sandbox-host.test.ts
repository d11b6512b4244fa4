import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync, spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Host } from "../../src/host/host.js";
import { VirtualClock } from "../../src/lifecycle/virtual-clock.js";
import { closeAllHosts, collect, startHost, text, waitUntil, waitUntilGone } from "../host/host-harness.js";
import { allProcesses, descendantsOf, readCmdline } from "../support/process-table.js";
import { gitIn, initRepository } from "../git/git-repository.js";

const nsService = fileURLToPath(new URL("./fixtures/ns-service.mjs", import.meta.url));
const sandboxedHost = fileURLToPath(new URL("./fixtures/sandboxed-host.mjs", import.meta.url));
const sandboxed = { mode: "workspace-write" } as const;

// Outside /tmp (every sandbox has a private /tmp): what is hidden must be hidden, not merely elsewhere.
const root = realpathSync(mkdtempSync("/var/tmp/berth-sandbox-test-"));
const home = join(root, "home");
const savedHome = process.env.HOME;
let count = 0;

/** A fresh directory under the test's root, for a session or a data directory. */
function freshDir(name: string): string {
  const dir = join(root, `${name}-${++count}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

beforeAll(() => {
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_test"), "SECRET-KEY-MATERIAL");
  // The host and the agents it starts take the home from here: the real one is never touched.
  process.env.HOME = home;
});

afterEach(closeAllHosts);

afterAll(() => {
  process.env.HOME = savedHome;
  rmSync(root, { recursive: true, force: true });
});

/** Runs `command` in a terminal of the session through the demo agent's `/run`: its exit code and output. */
async function run(host: Host, sessionId: string, command: string): Promise<{ exitCode: number | null; output: string }> {
  const live = collect(host, sessionId);
  try {
    await host.prompt(sessionId, text(`/run ${command}`));
    for (const event of live.events) {
      if (event.type !== "update") continue;
      const update = event.notification.update;
      if (update.sessionUpdate !== "tool_call_update" || !update.rawOutput) continue;
      const content = update.content?.[0];
      const output = content?.type === "content" && content.content.type === "text" ? content.content.text : "";
      return { exitCode: (update.rawOutput as { exitCode: number | null }).exitCode, output };
    }
    throw new Error(`no outcome of /run ${command}`);
  } finally {
    live.unsubscribe();
  }
}

const ownPidNamespace = () => readlinkSync("/proc/self/ns/pid");

/** Whether some process under `pid` runs in a PID namespace other than the test's. */
function runsInOwnNamespace(pid: number): boolean {
  return descendantsOf(pid).some((child) => {
    try {
      return readlinkSync(`/proc/${child}/ns/pid`) !== ownPidNamespace();
    } catch {
      return false;
    }
  });
}

describe("workspace-write sandbox", () => {
  it("the agent and its terminals write in the session's directory alone, and cannot read hidden secrets", async () => {
    const dataDir = freshDir("data");
    const { host } = await startHost({ dataDir });
    const workDir = freshDir("work");
    const otherDir = freshDir("other");
    const session = await host.createSession({ cwd: workDir, sandbox: sandboxed });
    expect(session.sandbox).toMatchObject({ mode: "workspace-write", network: "on" });
    expect(session.sandbox!.writable).toContain(workDir);
    expect(session.sandbox!.hidden).toEqual(expect.arrayContaining([join(home, ".ssh"), dataDir]));
    const { pid } = await host.hold(session.id, "client").child;
    expect(runsInOwnNamespace(pid)).toBe(true);

    expect(await run(host, session.id, "echo inside > inside.txt")).toMatchObject({ exitCode: 0 });
    expect(readFileSync(join(workDir, "inside.txt"), "utf8")).toBe("inside\n");

    for (const target of [join(home, "outside.txt"), join(home, ".ssh", "planted"), join(otherDir, "planted.txt")]) {
      const outcome = await run(host, session.id, `echo x > ${target}`);
      expect(outcome.exitCode, target).not.toBe(0);
      expect(existsSync(target), target).toBe(false);
    }
    const secret = await run(host, session.id, `cat ${join(home, ".ssh", "id_test")}`);
    expect(secret.exitCode).not.toBe(0);
    expect(secret.output).not.toContain("SECRET-KEY-MATERIAL");
    // The data directory (the database, the token, other sessions' worktrees) shows the agent's own state alone.
    expect(existsSync(join(dataDir, "berth.sqlite"))).toBe(true);
    expect(await run(host, session.id, `ls -A ${dataDir}`)).toMatchObject({ exitCode: 0, output: "agent-state\n" });
  });

  it("a session in a git worktree commits: the repository's git directories are writable, its other files not", async () => {
    const repo = freshDir("repo");
    const git = (cwd: string, ...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" });
    git(repo, "init", "-q");
    git(repo, "commit", "-q", "--allow-empty", "-m", "first");
    const worktree = join(root, `worktree-${++count}`);
    git(repo, "worktree", "add", "-q", worktree);
    const { host } = await startHost({ dataDir: freshDir("data") });
    const session = await host.createSession({ cwd: worktree, sandbox: sandboxed });
    expect(await run(host, session.id, "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m sandboxed")).toMatchObject({ exitCode: 0 });
    expect(git(worktree, "log", "--format=%s", "-1")).toBe("sandboxed\n");
    expect((await run(host, session.id, `echo x > ${join(repo, "planted.txt")}`)).exitCode).not.toBe(0);
  });

  it("the repository's own .berth/check runs in the session's sandbox: it writes in the worktree, not in the home", async () => {
    const repository = initRepository(freshDir("repo"));
    mkdirSync(join(repository, ".berth"));
    const planted = join(home, "planted-by-check");
    writeFileSync(join(repository, ".berth", "check"), `#!/bin/sh\necho built > built.txt\necho planted > ${planted}\n`, { mode: 0o755 });
    gitIn(repository, "add", "-A");
    gitIn(repository, "commit", "--quiet", "-m", "the check");
    const { host } = await startHost({ dataDir: freshDir("data") });
    const session = await host.createSession({ cwd: repository, worktree: {}, sandbox: sandboxed });
    const refused = await host.landSession(session.id).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: "check_failed", details: { output: expect.stringContaining("Read-only file system") } });
    expect(existsSync(planted)).toBe(false);
    expect(readFileSync(join(session.cwd, "built.txt"), "utf8")).toBe("built\n");
  });

  it("the repository's own .berth/setup runs in the new session's sandbox: one writing to the home fails the creation", async () => {
    const repository = initRepository(freshDir("repo"));
    mkdirSync(join(repository, ".berth"));
    const planted = join(home, "planted-by-setup");
    writeFileSync(join(repository, ".berth", "setup"), `#!/bin/sh\necho planted > ${planted}\n`, { mode: 0o755 });
    gitIn(repository, "add", "-A");
    gitIn(repository, "commit", "--quiet", "-m", "the setup");
    const { host } = await startHost({ dataDir: freshDir("data") });
    await expect(host.createSession({ cwd: repository, worktree: {}, sandbox: sandboxed })).rejects.toMatchObject({
      code: "setup_failed",
      details: { output: expect.stringContaining("Read-only file system") },
    });
    expect(existsSync(planted)).toBe(false);
    expect(host.listSessions()).toEqual([]);
  });

  it("a session without a sandbox runs as before", async () => {
    const { host } = await startHost({ dataDir: freshDir("data") });
    const session = await host.createSession({ cwd: freshDir("work") });
    expect(session.sandbox).toBeNull();
    const target = join(freshDir("plain"), "written.txt");
    expect(await run(host, session.id, `echo x > ${target}`)).toMatchObject({ exitCode: 0 });
    expect(existsSync(target)).toBe(true);
  });

  describe("network", () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      // The client exits as soon as it is connected: a reset is expected.
      server = createServer((socket) => socket.on("error", () => undefined).end("hello\n"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const connect = () =>
      `${process.execPath} -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(3))"`;

    it("off: a loopback port served outside the sandbox cannot be reached; on: it can", async () => {
      const { host } = await startHost({ dataDir: freshDir("data") });
      const closed = await host.createSession({ cwd: freshDir("work"), sandbox: { mode: "workspace-write", network: "off" } });
      expect(closed.sandbox).toMatchObject({ network: "off" });
      expect(await run(host, closed.id, connect())).toMatchObject({ exitCode: 3 });
      const open = await host.createSession({ cwd: freshDir("work"), sandbox: { mode: "workspace-write", network: "on" } });
      expect(await run(host, open.id, connect())).toMatchObject({ exitCode: 0 });
    });
  });

  it("a location's MCP service runs in a sandbox of its own, writable at the location alone", async () => {
    const workDir = freshDir("work");
    const { host } = await startHost({
      dataDir: freshDir("data"),
      config: { services: { web: { command: process.execPath, args: [nsService], port: "auto", mcp: { type: "http", path: "/mcp" } } } },
    });
    const session = await host.createSession({ cwd: workDir, sandbox: sandboxed });
    await host.hold(session.id, "client").child;
    const view = JSON.parse(readFileSync(join(workDir, "service-view.json"), "utf8")) as { pidNamespace: string; home: string };
    expect(view.pidNamespace).not.toBe(ownPidNamespace());
    expect(view.home).not.toBe("written");
    expect(existsSync(join(home, "service-was-here"))).toBe(false);
  });

  it("services started for an unsandboxed session start again in a sandbox once a sandboxed session at the location starts", async () => {
    const workDir = freshDir("work");
    const { host } = await startHost({
      dataDir: freshDir("data"),
      config: { services: { web: { command: process.execPath, args: [nsService], port: "auto", mcp: { type: "http", path: "/mcp" } } } },
    });
    const serviceView = () => JSON.parse(readFileSync(join(workDir, "service-view.json"), "utf8")) as { pidNamespace: string };
    const plain = await host.createSession({ cwd: workDir });
    await host.hold(plain.id, "client").child;
    expect(serviceView().pidNamespace).toBe(ownPidNamespace());
    rmSync(join(home, "service-was-here"), { force: true });

    const boxed = await host.createSession({ cwd: workDir, sandbox: sandboxed });
    await host.hold(boxed.id, "client").child;
    expect(serviceView().pidNamespace).not.toBe(ownPidNamespace());
  });

  it("release stops the whole tree, an orphan of the agent included; deleting the session stops a setsid daemon of its terminal", async () => {
    const clock = new VirtualClock();
    const { host } = await startHost({ dataDir: freshDir("data"), clock });
    const session = await host.createSession({ cwd: freshDir("work"), sandbox: sandboxed });
    const ticket = host.hold(session.id, "client");
    const { pid } = await ticket.child;
    expect(runsInOwnNamespace(pid)).toBe(true);
    await host.prompt(session.id, text("/spawn-orphan"));
    const tree = descendantsOf(pid);
    expect(tree.some((child) => readFileSync(`/proc/${child}/cmdline`, "utf8").startsWith("sleep\0"))).toBe(true);
    ticket.release();
    await clock.advance(15_000);
    expect(await waitUntilGone([pid, ...tree], 15_000)).toEqual([]);

    const marker = `3600.${process.pid}${count}`;
    const turn = host.prompt(session.id, text(`/run setsid -f sleep ${marker}; sleep 3600`)).catch(() => undefined);
    const daemons = () => allProcesses().filter((p) => readCmdline(p) === `sleep\0${marker}\0`);
    await waitUntil(() => daemons().length === 1, "the setsid daemon runs");
    const daemon = daemons()[0]!;
    await host.deleteSession(session.id);
    await turn;
    expect(await waitUntilGone([daemon])).toEqual([]);
  });

  it("a stop is polite first: a sandboxed command gets the signal and its grace, then its namespace goes", async () => {
    const workDir = freshDir("work");
    const { host } = await startHost({ dataDir: freshDir("data"), config: { stopTimeout: "5s" } });
    const session = await host.createSession({ cwd: workDir, sandbox: sandboxed });
    const log = join(workDir, "stop.log");
    const script = `trap 'echo term >> ${log}; sleep 0.3; echo clean >> ${log}; exit 0' TERM; echo started >> ${log}; while :; do sleep 0.05; done`;
    void host.prompt(session.id, text(`/run ${script}`)).catch(() => undefined);
    await waitUntil(() => existsSync(log), "the command runs");
    await host.deleteSession(session.id);
    // The signal may come more than once (the turn's cancel, the release); what matters is that the trap finished.
    expect(readFileSync(log, "utf8")).toMatch(/^started\n(term\n)+clean\n$/);
  });

  it("a host killed outright: the next host on its data directory reaps a sandboxed terminal's setsid daemon", async () => {
    const dataDir = freshDir("data");
    const marker = `3600.${process.pid}${++count}`;
    const dead = spawn(process.execPath, [sandboxedHost, dataDir, freshDir("work"), marker], {
      stdio: ["ignore", "pipe", "inherit"],
      detached: true,
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: dead.stdout! }).once("line", resolve);
        dead.once("exit", (code) => reject(new Error(`host process exited early (${code})`)));
      });
      const { agentPid } = JSON.parse(line) as { agentPid: number };
      const daemons = () => allProcesses().filter((p) => readCmdline(p) === `sleep\0${marker}\0`);
      expect(daemons()).toHaveLength(1);
      expect(readlinkSync(`/proc/${daemons()[0]!}/ns/pid`)).not.toBe(ownPidNamespace());
      process.kill(dead.pid!, "SIGKILL");
      expect(await waitUntilGone([dead.pid!, agentPid])).toEqual([]);
      expect(daemons()).toHaveLength(1);

      await startHost({ dataDir });
      expect(await waitUntilGone(daemons())).toEqual([]);
    } finally {
      killGroupOf(dead.pid!);
    }
  });

  it("a restart keeps the session's policy: its next agent is sandboxed again", async () => {
    const fixture = await startHost({ dataDir: freshDir("data") });
    const workDir = freshDir("work");
    const session = await fixture.host.createSession({ cwd: workDir, sandbox: { mode: "workspace-write", network: "off" } });
    const host = await fixture.restart();
    expect(host.getSession(session.id)!.sandbox).toMatchObject({ mode: "workspace-write", network: "off" });
    const target = join(home, "after-restart.txt");
    expect((await run(host, session.id, `echo x > ${target}`)).exitCode).not.toBe(0);
    expect(existsSync(target)).toBe(false);
  });

  it("without bubblewrap a sandboxed session is refused with the reason and the fix; an unsandboxed one is still served", async () => {
    const { host, workDir } = await startHost({ dataDir: freshDir("data"), config: { sandbox: { bwrap: join(root, "no-such-bwrap") } } });
    await expect(host.createSession({ cwd: workDir, sandbox: sandboxed })).rejects.toThrow(
      /asks for a sandbox, but bubblewrap \(".*no-such-bwrap"\) was not found: install bubblewrap \(Debian and Ubuntu: apt-get install bubblewrap\)/,
    );
    await expect(host.createSession({ cwd: workDir, sandbox: { mode: "sealed" } })).rejects.toThrow(
      /sandbox\.mode: expected "off" or "workspace-write"/,
    );
    expect((await host.createSession({ cwd: workDir })).sandbox).toBeNull();
  });
});

function killGroupOf(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // Gone already.
  }
}
