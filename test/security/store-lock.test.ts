import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { BerthProcess } from "../server/serve-process.js";
import { AcpTestClient, cleanUp as closeClients } from "../server/server-harness.js";

/**
 * Issue 9 item 7: with a 12 s write transaction held by another process, `/healthz` took 12 s and
 * a prompt failed after 15 s with SQLITE_BUSY. Now the event loop never waits on SQLite: every
 * write goes through the writer thread, which waits for the lock (and says so) while the host
 * keeps answering; what was queued is stored, in order, once the lock is free.
 */

const lockHolderScript = fileURLToPath(new URL("./fixtures/hold-write-lock.mjs", import.meta.url));

const temps: string[] = [];
const hosts: BerthProcess[] = [];
const holders: LockHolder[] = [];

afterEach(async () => {
  for (const holder of holders.splice(0)) holder.kill();
  await closeClients();
  for (const host of hosts.splice(0)) {
    host.signal("SIGTERM");
    await host.exited;
    host.killGroup();
  }
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}

/** A real `berth serve` on a fresh data directory, with `config` as its configuration file. */
async function serve(config: Record<string, unknown> = {}) {
  const dataDir = tempDir("berth-lock-data-");
  const workDir = tempDir("berth-lock-work-");
  const configHome = tempDir("berth-lock-config-");
  mkdirSync(join(configHome, "berth"));
  writeFileSync(join(configHome, "berth", "config.json"), JSON.stringify(config));
  const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir], { XDG_CONFIG_HOME: configHome });
  hosts.push(server);
  const { url, token, acpUrl } = await server.startupLine();
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });
  const healthz = async () => (await (await fetch(`${url}/healthz`)).json()) as Healthz;
  return { server, url, token, acpUrl, dataDir, workDir, api, healthz, database: join(dataDir, "berth.sqlite") };
}

interface Healthz {
  status: string;
  store: { state: string; pendingWrites: number; since?: string; code?: string; reason?: string };
}

/** Another process (a child of this test, in its own process group) holding the database's write lock. */
class LockHolder {
  private output = "";
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => child.once("exit", resolve));
  }

  static async take(database: string): Promise<LockHolder> {
    const holder = new LockHolder(spawn(process.execPath, [lockHolderScript, database], { detached: true, stdio: "pipe" }));
    holders.push(holder);
    await until(async () => holder.output.includes("locked"), "the other process holds the write lock");
    return holder;
  }

  /** True until it let go. */
  get holding(): boolean {
    return this.output.includes("locked") && !this.output.includes("released");
  }

  async release(): Promise<void> {
    this.child.stdin.write("release\n");
    expect(await this.exited).toBe(0);
    expect(this.output).toContain("released");
  }

  kill(): void {
    try {
      process.kill(-this.child.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/** Polls an async condition every 10 ms until it holds (10 s at most). */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The flood chunks of a client's notifications, as their letters (chunk i is 64 times letter i mod 26). */
function floodLetters(client: AcpTestClient, sessionId: string): string {
  return client.notifications
    .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === "agent_message_chunk")
    .map(({ update }) => (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? update.content.text : ""))
    .filter((text) => /^([a-z])\1{63}$/.test(text))
    .map((text) => text[0])
    .join("");
}

const expectedLetters = (count: number) => Array.from({ length: count }, (_, i) => String.fromCharCode(97 + (i % 26))).join("");

async function storedEvents(berth: Awaited<ReturnType<typeof serve>>, sessionId: string) {
  const response = await berth.api(`/api/sessions/${sessionId}/events?limit=10000`);
  return ((await response.json()) as { events: Array<{ seq: number; kind: string; payload: { update?: { content?: { text?: string } } } }> }).events;
}

describe("another process holds the journal's SQLite write lock (issue 9 item 7)", () => {
  it("/healthz answers at once, reporting the store degraded and why, and healthy once the lock is free; reads answer, a session created meanwhile is stored after", async () => {
    const berth = await serve();
    const holder = await LockHolder.take(berth.database);
    // A write the client waits for: it waits (asynchronously) for the lock.
    const creating = berth.api("/api/sessions", { method: "POST", body: JSON.stringify({ cwd: berth.workDir }) });
    let createdYet = false;
    void creating.then(() => (createdYet = true));
    await until(async () => (await berth.healthz()).status === "degraded", "/healthz reports the store degraded");

    // Answered while the write it reports on still waits for the lock: /healthz never waits for the store.
    const health = await berth.healthz();
    expect(holder.holding).toBe(true);
    expect(createdYet).toBe(false);
    expect(health).toMatchObject({
      status: "degraded",
      store: {
        state: "degraded",
        code: "SQLITE_BUSY",
        reason: "waiting for the database's write lock, held by another connection (SQLITE_BUSY)",
        since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });
    expect(health.store.pendingWrites).toBeGreaterThan(0);
    // Reads never wait for the write lock.
    const listed = await berth.api("/api/sessions");
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual({ sessions: [] });
    expect(await (await berth.api("/metrics")).text()).toMatch(/^berth_store_degraded 1$/m);

    await holder.release();
    const created = await creating;
    expect(created.status).toBe(201);
    const session = (await created.json()) as { id: string };
    await until(async () => (await berth.healthz()).status === "ok", "/healthz reports the store healthy again");
    expect((await berth.healthz()).store).toMatchObject({ state: "ok" });
    expect(await (await berth.api("/metrics")).text()).toMatch(/^berth_store_degraded 0$/m);
    expect(((await (await berth.api("/api/sessions")).json()) as { sessions: Array<{ id: string }> }).sessions.map((s) => s.id)).toEqual([
      session.id,
    ]);
    // One line when it began, one when it ended (read from the host's output, which may come after /healthz's answer).
    await until(async () => berth.server.logLines().some((line) => line.msg === "store writes again"), "the host logs that the store writes again");
    const lines = berth.server.logLines().map((line) => line.msg);
    expect(lines.filter((msg) => msg === "store cannot write; writes are queued until it can")).toHaveLength(1);
    expect(lines.filter((msg) => msg === "store writes again")).toHaveLength(1);
  });

  it("a prompt made while the lock is held completes after release; its events are stored in order, and clients see them only then", async () => {
    const berth = await serve();
    const client = await AcpTestClient.connect(berth.acpUrl, { token: berth.token });
    const sessionId = await client.newSession(berth.workDir);
    await client.prompt(sessionId, "warm up");
    const seen = client.notifications.length;
    const holder = await LockHolder.take(berth.database);

    const prompted = client.prompt(sessionId, "hello while the journal is locked");
    await until(async () => (await berth.healthz()).status === "degraded", "/healthz reports the store degraded");
    // Committed before seen: nothing of the turn can be stored yet, so nothing of it was sent.
    expect(client.notifications.length).toBe(seen);

    await holder.release();
    expect(await prompted).toMatchObject({ stopReason: "end_turn" });
    expect(client.texts(sessionId)).toContain("hello while the journal is locked");
    const events = await storedEvents(berth, sessionId);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    const turn = events.slice(events.findLastIndex((event) => event.kind === "turn_started"));
    expect(turn[0]!.kind).toBe("turn_started");
    expect(turn.at(-1)!.kind).toBe("turn_ended");
    expect(turn.slice(1, -1).every((event) => event.kind === "update")).toBe(true);
    expect(turn.map((event) => event.payload.update?.content?.text ?? "").join("")).toContain("hello while the journal is locked");
  });

  it("a flood relayed while the lock is held loses nothing: both clients get every chunk in order, and the journal holds them all", async () => {
    const chunks = 3_000;
    const berth = await serve();
    const prompting = await AcpTestClient.connect(berth.acpUrl, { token: berth.token });
    const sessionId = await prompting.newSession(berth.workDir);
    await prompting.prompt(sessionId, "warm up");
    const watching = await AcpTestClient.connect(berth.acpUrl, { token: berth.token });
    await watching.load(sessionId, berth.workDir);
    const holder = await LockHolder.take(berth.database);

    const flooded = prompting.prompt(sessionId, `/flood ${chunks} 64`);
    await until(async () => (await berth.healthz()).status === "degraded", "/healthz reports the store degraded");
    await holder.release();
    expect(await flooded).toMatchObject({ stopReason: "end_turn" });

    expect(floodLetters(prompting, sessionId)).toBe(expectedLetters(chunks));
    await until(async () => floodLetters(watching, sessionId).length === chunks, "the watching client received the flood");
    expect(floodLetters(watching, sessionId)).toBe(expectedLetters(chunks));
    const events = await storedEvents(berth, sessionId);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    const stored = events
      .map((event) => event.payload.update?.content?.text ?? "")
      .filter((text) => /^([a-z])\1{63}$/.test(text))
      .map((text) => text[0])
      .join("");
    expect(stored).toBe(expectedLetters(chunks));
  });

  it("a creation or a deletion waiting longer than writeTimeout fails with 503 store_unavailable; once the lock is free, the session created is not there and the one deleted is gone", async () => {
    const berth = await serve({ writeTimeout: "1s" });
    const existing = (await (await berth.api("/api/sessions", { method: "POST", body: JSON.stringify({ cwd: berth.workDir }) })).json()) as {
      id: string;
    };
    const holder = await LockHolder.take(berth.database);
    const refused = await berth.api("/api/sessions", { method: "POST", body: JSON.stringify({ cwd: berth.workDir }) });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({
      error: "store_unavailable",
      message: expect.stringMatching(
        /^the new session could not be stored within 1s: the store cannot write \(waiting for the database's write lock, held by another connection \(SQLITE_BUSY\), since .+\); \d+ writes are queued; it was not created$/,
      ),
    });
    const deleting = await berth.api(`/api/sessions/${existing.id}`, { method: "DELETE" });
    expect(deleting.status).toBe(503);
    expect(((await deleting.json()) as { message: string }).message).toMatch(
      /^the deletion could not be stored within 1s: .*; it stays queued and is done once the store writes again$/,
    );
    expect(holder.holding).toBe(true);

    await holder.release();
    await until(async () => {
      const { store } = await berth.healthz();
      return store.state === "ok" && store.pendingWrites === 0;
    }, "everything queued is stored");
    expect(await (await berth.api("/api/sessions")).json()).toEqual({ sessions: [] });
    // Each refusal is a warning naming the request; the outage is not logged as a failure. (The host's output is read
    // apart from its answers: waited for.)
    const refusal = "request refused: the store cannot write";
    await until(async () => berth.server.logLines().filter((line) => line.msg === refusal).length >= 2, "both refusals are logged");
    const lines = berth.server.logLines();
    expect(lines.filter((line) => line.msg === refusal).map((line) => [line.level, line.method, line.path])).toEqual([
      [40, "POST", "/api/sessions"],
      [40, "DELETE", `/api/sessions/${existing.id}`],
    ]);
    expect(lines.filter((line) => (line.level as number) >= 50)).toEqual([]);
  });
});
