import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, methods, PROTOCOL_VERSION, type ClientConnection } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import { ProcessScope } from "../../src/processes/scope.js";
import type { JournalEvent } from "../../src/store/events.js";
import { BerthProcess } from "../server/serve-process.js";
import {
  descendantsOf,
  killLeftovers,
  processGroupOf,
  processIsRunning,
  startedProcess,
  waitUntil,
  waitUntilGone,
  type StartedProcess,
} from "../support/process-table.js";

/** Temp directories and `berth serve` processes of a test file, removed and killed after it. */
export class FleetTestBed {
  private readonly dirs: string[] = [];
  private readonly processes: BerthProcess[] = [];
  /** The agents of hosts killed with SIGKILL: they outlive their host, so the test ends them itself. */
  private readonly orphans: StartedProcess[] = [];

  tempDir(prefix: string): string {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    this.dirs.push(dir);
    return dir;
  }

  /**
   * `berth serve --store <url> --host-id <id>` on `dataDir` (its own XDG config home), with `config` as its config file,
   * on `port` (0: any free one) with `env` added to its environment, run through `wrapper` if given (see {@link BerthProcess}).
   */
  async serve(
    storeUrl: string,
    hostId: string,
    dataDir: string,
    config: object = {},
    { port = 0, env = {}, wrapper = [] }: { port?: number; env?: Record<string, string>; wrapper?: readonly string[] } = {},
  ) {
    const configFile = join(dataDir, "config.json");
    writeFileSync(configFile, JSON.stringify(config), { mode: 0o600 });
    const server = new BerthProcess(
      ["serve", "--port", String(port), "--data-dir", dataDir, "--config", configFile, "--store", storeUrl, "--host-id", hostId],
      { XDG_CONFIG_HOME: dataDir, ...env },
      wrapper,
    );
    this.processes.push(server);
    return { server, ...(await server.startupLine()) };
  }

  /** Kills a host with SIGKILL; its agents (each in a group of its own: they outlive it) are ended by {@link cleanup}. */
  async killHost(host: { server: { pid: number; signal(signal: NodeJS.Signals): void; exited: Promise<unknown> } }): Promise<void> {
    this.orphans.push(
      ...descendantsOf(host.server.pid)
        .filter((pid) => processGroupOf(pid) === pid)
        .map(startedProcess),
    );
    host.server.signal("SIGKILL");
    await host.server.exited;
  }

  /** Any other `berth` command, killed after the test like the hosts. */
  spawn(args: readonly string[], env: Readonly<Record<string, string>>): BerthProcess {
    const child = new BerthProcess(args, env);
    this.processes.push(child);
    return child;
  }

  /**
   * Kills each process the test started with its group, and the groups of its agents (each in its own, found among the
   * process's descendants while it still runs, or when {@link killHost} killed it), waits until all of them are gone,
   * then removes the temp directories.
   */
  async cleanup(): Promise<void> {
    killLeftovers(this.orphans);
    const started = this.orphans.splice(0).map((agent) => agent.pid);
    for (const server of this.processes.splice(0)) {
      // Agents are detached into groups of their own: found while their host still runs (they outlive it).
      const agents = descendantsOf(server.pid)
        .filter((pid) => processGroupOf(pid) === pid)
        .map(startedProcess);
      server.killGroup();
      killLeftovers(agents);
      started.push(server.pid, ...agents.map((agent) => agent.pid));
    }
    const running = await waitUntilGone(started);
    for (const dir of this.dirs.splice(0)) {
      // A host killed does not remove its agents' cgroups (its next start would): the test removes them, empty now.
      await ProcessScope.forDataDir(dir).reapAll();
      rmSync(dir, { recursive: true, force: true });
    }
    if (running.length > 0) throw new Error(`processes still running after the test: ${running.join(", ")}`);
  }
}

/** A message chunk as a client was shown it: its text and the journal seqs it stands for (`berth/seqFrom`..`berth/seq`). */
export type ShownChunk = { readonly from: number; readonly to: number; readonly text: string };

export interface AcpClientOptions {
  /** Ask for `berth/journalSeq` and keep each message chunk with the seqs it was shown at ({@link AcpClient.shown}). */
  readonly seqs?: "recorded" | "not-asked";
  /** What the client does with a permission request: leave it unanswered (the client has walked away), or allow it. */
  readonly permissions?: "unanswered" | "allowed";
}

/** An ACP client over the host's WebSocket that collects the agent's message text per session. */
export class AcpClient {
  readonly texts = new Map<string, string>();
  /** With `seqs: "recorded"`: each message chunk shown, per session, with its seqs. */
  readonly shown = new Map<string, ShownChunk[]>();
  /** Permission requests received. */
  readonly asked: string[] = [];
  readonly connection: ClientConnection;
  private readonly seqs: "recorded" | "not-asked";

  constructor(acpUrl: string, token: string, { seqs = "not-asked", permissions = "unanswered" }: AcpClientOptions = {}) {
    this.seqs = seqs;
    const stream = createWebSocketStream(acpUrl, { WebSocket: WebSocket as never, headers: { authorization: `Bearer ${token}` } });
    this.connection = client({ name: "fleet-test" })
      .onNotification(methods.client.session.update, ({ params }) => {
        const { update, _meta } = params;
        if (update.sessionUpdate !== "agent_message_chunk" || update.content.type !== "text") return;
        this.texts.set(params.sessionId, (this.texts.get(params.sessionId) ?? "") + update.content.text);
        if (seqs !== "recorded") return;
        const to = Number(_meta?.["berth/seq"]);
        const from = Number(_meta?.["berth/seqFrom"] ?? to);
        this.shown.set(params.sessionId, [...(this.shown.get(params.sessionId) ?? []), { from, to, text: update.content.text }]);
      })
      .onRequest(methods.client.session.requestPermission, ({ params }) => {
        this.asked.push(params.sessionId);
        if (permissions === "allowed") return Promise.resolve({ outcome: { outcome: "selected" as const, optionId: "allow" } });
        return new Promise<never>(() => undefined);
      })
      .connect(stream);
  }

  get agent() {
    return this.connection.agent;
  }

  async initialize(): Promise<void> {
    const clientCapabilities = this.seqs === "recorded" ? { _meta: { "berth/journalSeq": true } } : {};
    await this.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities });
  }

  async newSession(cwd: string): Promise<string> {
    return (await this.agent.request(methods.agent.session.new, { cwd, mcpServers: [] })).sessionId;
  }

  async resume(sessionId: string, cwd: string): Promise<void> {
    await this.agent.request(methods.agent.session.resume, { sessionId, cwd, mcpServers: [] });
  }

  prompt(sessionId: string, text: string) {
    return this.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  close(): void {
    this.connection.close();
  }
}

/** The agent's message text of journal events: their chunks joined, in the order given. */
export function messageText(events: readonly JournalEvent[]): string {
  return events
    .map((event) => (event.payload as { update?: { sessionUpdate: string; content?: { text?: string } } }).update)
    .filter((update) => update?.sessionUpdate === "agent_message_chunk")
    .map((update) => update!.content?.text ?? "")
    .join("");
}

/** The chunks a client was shown that a session's stored journal does not hold at the seqs they were shown with. */
export function chunksNotStoredAsShown(shown: readonly ShownChunk[], events: readonly JournalEvent[]): ShownChunk[] {
  const bySeq = new Map(events.map((event) => [event.seq, event]));
  return shown.filter((chunk) => {
    const stored: JournalEvent[] = [];
    for (let seq = chunk.from; seq <= chunk.to; seq++) {
      const event = bySeq.get(seq);
      if (event) stored.push(event);
    }
    return !(chunk.to >= chunk.from && stored.length === chunk.to - chunk.from + 1 && messageText(stored) === chunk.text);
  });
}

/** GET a REST route of a running host as JSON. */
export async function getJson<T>(url: string, token: string, path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as T };
}

/** The host's log lines at level error or above (pino: 50). */
export function errorLines(server: BerthProcess): Array<Record<string, unknown>> {
  return server.logLines().filter((line) => Number(line.level) >= 50);
}

/** Stops a host politely and waits for it to exit. */
export async function stopHost(server: BerthProcess): Promise<void> {
  server.signal("SIGTERM");
  const { code } = await server.exited;
  if (code !== 0) throw new Error(`berth serve exited with ${code}; stderr: ${server.stderr}`);
}

/**
 * A new session on the host whose demo agent is in the middle of `/sleep <duration>`: it has said so, and sleeps
 * (what it says next waits in the pipe if the host is stopped meanwhile).
 */
export async function sleepingTurn(host: { acpUrl: string; url: string; token: string }, workDir: string, duration: string) {
  const acp = new AcpClient(host.acpUrl, host.token);
  await acp.initialize();
  const sessionId = await acp.newSession(workDir);
  const turn = acp.prompt(sessionId, `/sleep ${duration}`).catch((error: unknown) => error);
  await waitUntil(() => (acp.texts.get(sessionId) ?? "").includes("Sleeping for"), "the agent announced its sleep");
  const { pid: agentPid } = (await getJson<{ pid: number }>(host.url, host.token, `/api/sessions/${sessionId}`)).body;
  if (!(agentPid > 0)) throw new Error(`the sleeping session has no agent pid: ${agentPid}`);
  return { acp, sessionId, turn, agentPid };
}

/** A host that lost the session (another host took it while this one was stopped): it stopped the agent and recorded the loss. */
export async function gaveUp(server: BerthProcess, sessionId: string, agentPid: number): Promise<void> {
  await waitUntil(() => !processIsRunning(agentPid), "the host stopped the agent of the session it lost", 15_000);
  await waitUntil(() => server.logLines().some((line) => line.kind === "session_lost" && line.sessionId === sessionId), "the host recorded the loss");
}

/** Waits until the host logged that it refused to store writes of the session (it belongs to another host now). */
export function refusedWrites(server: BerthProcess, sessionId: string): Promise<void> {
  return waitUntil(
    () =>
      server
        .logLines()
        .some(
          (line) =>
            line.level === 40 &&
            line.msg === "writes refused: their sessions belong to another host of the fleet now" &&
            String(line.sessions) === sessionId,
        ),
    "the host refused the writes of the session it lost",
  );
}

/** Polls `probe` until it holds (the condition itself, with a deadline). */
export async function eventually(probe: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A host's `GET /api/events` stream, read in the background: its events so far, by name. */
export class OperatorStream {
  private text = "";

  private constructor(
    response: Response,
    private readonly abort: AbortController,
  ) {
    const body = response.body!;
    const decoder = new TextDecoder();
    void (async () => {
      for await (const chunk of body) this.text += decoder.decode(chunk as Uint8Array, { stream: true });
    })().catch(() => undefined);
  }

  static async open(url: string, token: string): Promise<OperatorStream> {
    const abort = new AbortController();
    const response = await fetch(`${url}/api/events`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
    if (response.status !== 200) throw new Error(`GET /api/events answered ${response.status}`);
    return new OperatorStream(response, abort);
  }

  /** The data of every event named `name` so far, parsed. */
  events<T>(name: string): T[] {
    return this.text
      .split("\n\n")
      .filter((frame) => frame.startsWith(`event: ${name}\n`))
      .map((frame) => JSON.parse(frame.slice(frame.indexOf("\ndata: ") + 7)) as T);
  }

  close(): void {
    this.abort.abort();
  }
}

/** An ACP error as the client sees it. */
export type Refusal = { code?: number; message: string; data?: { code?: string } };

/** What an ACP request failed with (or undefined if it succeeded). */
export function refusalOf(request: Promise<unknown>): Promise<Refusal | undefined> {
  return request.then(
    () => undefined,
    (error: unknown) => error as Refusal,
  );
}
