import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LocationView, QuestionView, SessionView } from "../../../src/host/views.js";
import { AcpTestClient, type ClientOptions } from "../../server/server-harness.js";
import { BerthProcess } from "../../server/serve-process.js";
import { auxiliaryReply, type ModelRequest, type ModelTurn } from "../../support/model-endpoint/script.js";
import { startModelEndpoint, type ModelEndpoint } from "../../support/model-endpoint/server.js";
import { descendantsOf, groupMembers, killLeftovers, startedProcess, waitUntil, type StartedProcess } from "../../support/process-table.js";
import type { AgentUnderTest } from "./agent-under-test.js";

/**
 * The world of the whole-turn scenarios: a scripted model endpoint, a real agent prepared in a
 * fresh home to call it, and a real `berth serve` (its own process, data directory and config
 * file) running that agent. Scenarios sharing one world each play their own script, told apart
 * by a tag in their prompt; `endScenario` deletes their sessions and checks that every agent
 * process and everything it ran is gone; `close` removes everything.
 */

/** Berth's knobs a world sets (durations as the config file writes them). */
export interface Knobs {
  releaseGrace?: string;
  idleTtl?: string;
  maxActiveHold?: string;
  sweepInterval?: string;
  interruptTimeout?: string;
}

export interface StampedRecord {
  id: number;
  at: number;
  message: string;
  record: {
    kind: string;
    sessionId?: string;
    pid?: number;
    reason?: string;
    why?: string;
    stopReason?: string | null;
    error?: string | null;
    directory?: string;
  };
}

/** One scenario's script: its turns in order, for the requests whose conversation carries its tag. */
interface Play {
  readonly tag: string;
  readonly turns: ModelTurn[];
  next: number;
}

export class World {
  readonly clients: AcpTestClient[] = [];
  /** Every agent process (and what it ran) seen while Berth ran, by pid; all must be gone after each scenario. */
  private readonly agentProcesses = new Map<number, StartedProcess>();
  /** The last lifecycle record whose agent process was watched (records persist across restarts). */
  private recordsWatched = 0;
  private readonly plays: Play[] = [];
  private berth!: BerthProcess;
  private berthRunning = false;
  url = "";
  acpUrl = "";
  token = "";

  private constructor(
    readonly agent: AgentUnderTest,
    readonly root: string,
    /** The directory sessions open in (the agent's config may live here). */
    readonly cwd: string,
    readonly endpoint: ModelEndpoint,
    private readonly configFile: string,
    private readonly dataDir: string,
  ) {}

  /**
   * `dataDir`: Berth's data directory, which worlds started one after another may share: Berth keeps
   * each agent's `initialize` answer there, so only the first world starts the agent to ask it.
   */
  static async start(agent: AgentUnderTest, options: { knobs?: Knobs; askPermission?: boolean; dataDir: string }): Promise<World> {
    const root = realpathSync(mkdtempSync(join(tmpdir(), `berth-whole-${agent.id}-`)));
    const cwd = join(root, "work");
    const { dataDir } = options;
    let world: World | undefined;
    // Until the world exists, the endpoint answers 400 (the script throws).
    const endpoint = await startModelEndpoint((request) => world!.reply(request));
    try {
      const entry = await agent.prepare({ home: join(root, "home"), cwd, endpointUrl: endpoint.url, askPermission: options.askPermission ?? false });
      const configFile = join(root, "berth.json");
      writeFileSync(configFile, JSON.stringify({ agents: { [agent.id]: entry }, defaultAgent: agent.id, ...options.knobs }, null, 2));
      world = new World(agent, root, cwd, endpoint, configFile, dataDir);
      await world.startBerth();
      // Records of earlier worlds on this data directory name processes long gone.
      world.recordsWatched = Math.max(0, ...(await world.records()).map((r) => r.id));
      return world;
    } catch (error) {
      await (world ? world.close() : endpoint.close()).catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * Registers a scenario's script; returns the tag its prompts must carry. Auxiliary requests (no
   * tools: titles) get a short text; a request with tools whose conversation carries no known tag,
   * or one beyond the script, is answered 400 and recorded in `endpoint.errors`.
   */
  play(turns: ModelTurn[]): string {
    const tag = `[scenario ${this.plays.length + 1}]`;
    this.plays.push({ tag, turns, next: 0 });
    return tag;
  }

  private reply(request: ModelRequest): ModelTurn {
    if (!request.hasTools) return { text: auxiliaryReply };
    const conversation = JSON.stringify(request.raw);
    const play = this.plays.find((p) => conversation.includes(p.tag));
    if (!play) throw new Error("no scenario's tag in this request");
    const turn = play.turns[play.next];
    if (!turn) throw new Error(`${play.tag} has ${play.turns.length} turn(s); this is request ${play.next + 1}`);
    play.next += 1;
    return turn;
  }

  /** The requests with tools of one scenario (by its tag), in order. */
  requestsOf(tag: string): ModelRequest[] {
    return this.endpoint.requests.filter((r) => r.hasTools && JSON.stringify(r.raw).includes(tag));
  }

  private async startBerth(): Promise<void> {
    this.berth = new BerthProcess(["serve", "--port", "0", "--config", this.configFile, "--data-dir", this.dataDir, "--print-token"], {
      XDG_CONFIG_HOME: this.dataDir,
      BERTH_LOG_LEVEL: "warn",
    });
    this.berthRunning = true;
    void this.berth.exited.then(() => (this.berthRunning = false));
    const started = await this.berth.startupLine();
    this.url = started.url;
    this.acpUrl = started.acpUrl;
    this.token = started.token;
  }

  /** `fetch` on Berth's REST API with the token; throws on a status other than `expected`. */
  async api<T>(path: string, init: RequestInit = {}, expected = 200): Promise<T> {
    const response = await fetch(this.url + path, {
      ...init,
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json", ...(init.headers as Record<string, string>) },
    });
    const text = await response.text();
    if (response.status !== expected) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  session(id: string): Promise<SessionView> {
    return this.api<SessionView>(`/api/sessions/${id}`);
  }

  async sessions(): Promise<SessionView[]> {
    return (await this.api<{ sessions: SessionView[] }>("/api/sessions")).sessions;
  }

  async questions(sessionId: string): Promise<QuestionView[]> {
    return (await this.api<{ questions: QuestionView[] }>(`/api/questions?sessionId=${sessionId}`)).questions;
  }

  /** The booted location of the world's cwd, if any. */
  async location(): Promise<LocationView | undefined> {
    return (await this.api<{ locations: LocationView[] }>("/api/locations")).locations.find((l) => l.directory === this.cwd);
  }

  /** A session's turns as Berth's journal keeps them: each turn's prompt (`started TEXT`) and end (`ended STOPREASON`), in order. */
  async journaledTurns(sessionId: string): Promise<string[]> {
    const { events } = await this.api<{ events: { kind: string; payload: { prompt?: { text?: string }[]; stopReason?: string | null } }[] }>(
      `/api/sessions/${sessionId}/events?limit=10000`,
    );
    return events.flatMap(({ kind, payload }) => {
      if (kind === "turn_started") return [`started ${payload.prompt?.[0]?.text}`];
      if (kind === "turn_ended") return [`ended ${payload.stopReason}`];
      return [];
    });
  }

  async records(): Promise<StampedRecord[]> {
    return (await this.api<{ records: StampedRecord[] }>("/api/records?limit=1000")).records;
  }

  /**
   * Waits on a condition read from Berth's views or the world (polled), failing with `what`. The
   * bound is generous: a real agent on a loaded 2-core machine takes seconds to start and answer.
   */
  async waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Waits until a client has received `text` among the agent's message chunks of a session. */
  waitForText(client: AcpTestClient, sessionId: string, text: string): Promise<void> {
    return this.waitFor(`the client received ${JSON.stringify(text)}`, () => client.texts(sessionId).includes(text));
  }

  /** Waits for a record matching `match` and returns it. */
  async waitForRecord(what: string, match: (r: StampedRecord["record"]) => boolean): Promise<StampedRecord> {
    let found: StampedRecord | undefined;
    await this.waitFor(what, async () => (found = (await this.records()).find((r) => match(r.record))) !== undefined);
    return found!;
  }

  /** An ACP client over WebSocket bound to the agent, initialized (and authenticated where the agent needs it). */
  async connect(options: Partial<ClientOptions> = {}): Promise<AcpTestClient> {
    const client = await AcpTestClient.connect(this.acpUrl, { token: this.token, agent: this.agent.id, ...options });
    this.clients.push(client);
    if (this.agent.authMethodId) await client.agent.request("authenticate", { methodId: this.agent.authMethodId });
    return client;
  }

  /**
   * Remembers an agent process and everything it runs now (its group and its descendants), to
   * check they are gone after the scenario; returns them.
   */
  watchProcesses(pid: number): number[] {
    const tree = [...new Set([pid, ...groupMembers(pid).map((member) => member.pid), ...descendantsOf(pid)])];
    for (const member of tree) {
      const started = startedProcess(member);
      // Remembered with its start time, so a pid reused later is never taken for it.
      if (started.startTicks !== "" && !this.agentProcesses.has(member)) this.agentProcesses.set(member, started);
    }
    return tree;
  }

  /** Watches the agent processes recorded since the last call (each started moments ago). */
  private async watchRecordedChildren(): Promise<void> {
    for (const { id, record } of await this.records()) {
      if (id <= this.recordsWatched) continue;
      this.recordsWatched = id;
      if ((record.kind === "child_acquired" || record.kind === "agent_asked") && typeof record.pid === "number") this.watchProcesses(record.pid);
    }
  }

  /**
   * After each scenario: closes its clients, deletes every session (Berth stops each agent's
   * process group), and checks that every agent process seen, and what it ran, is gone.
   */
  async endScenario(): Promise<void> {
    await Promise.all(this.clients.splice(0).map((c) => c.close().catch(() => undefined)));
    if (this.berthRunning) {
      await this.watchRecordedChildren();
      for (const session of await this.sessions()) await this.api(`/api/sessions/${session.id}`, { method: "DELETE" }, 204);
    }
    await this.checkProcessesGone();
  }

  private async checkProcessesGone(): Promise<void> {
    const watched = [...this.agentProcesses.values()];
    this.agentProcesses.clear();
    const running = () => watched.filter((p) => startedProcess(p.pid).startTicks === p.startTicks);
    await waitUntil(() => running().length === 0, "every agent process is gone", 15_000).catch(() => undefined);
    const left = running();
    killLeftovers(left);
    if (left.length > 0) throw new Error(`agent processes left running: ${left.map((p) => `${p.pid} (${commandLineOf(p.pid)})`).join(", ")}`);
  }

  /** SIGTERM to `berth serve`, waiting for it to exit (it stops its agents' groups first). */
  async stopBerth(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    await this.watchRecordedChildren();
    this.berth.signal("SIGTERM");
    return this.berth.exited;
  }

  /** What Berth printed on stderr that is not an info or warning log line (errors, stacks): why an exit was not clean. */
  berthErrors(): string {
    const level = (line: string) => {
      try {
        return Number((JSON.parse(line) as { level?: unknown }).level);
      } catch {
        return Number.POSITIVE_INFINITY;
      }
    };
    return this.berth.stderr
      .split("\n")
      .filter((line) => line !== "" && level(line) >= 50)
      .join("\n");
  }

  /** A new `berth serve` on the same data directory and config (on a new port). */
  restartBerth(): Promise<void> {
    return this.startBerth();
  }

  /** Closes clients, stops Berth and the endpoint, checks every agent process is gone, removes the temp dir. */
  async close(): Promise<void> {
    try {
      await Promise.all(this.clients.splice(0).map((c) => c.close().catch(() => undefined)));
      if (this.berthRunning) await this.stopBerth();
      await this.checkProcessesGone();
    } finally {
      this.berth.killGroup();
      await this.endpoint.close();
      rmSync(this.root, { recursive: true, force: true });
    }
  }
}

/** A process's command line, for messages. */
export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
}
