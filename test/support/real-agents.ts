import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type ClientCapabilities,
  type ClientConnection,
  type InitializeResponse,
  type LoadSessionResponse,
  type NewSessionResponse,
  type PromptResponse,
  type SessionNotification,
  type SetSessionConfigOptionResponse,
  type Stream,
} from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { groupMembers, waitUntilGone } from "./process-table.js";

/**
 * Real ACP agents installed as dev dependencies (`opencode-ai`, `@zed-industries/claude-agent-acp`,
 * `@zed-industries/codex-acp`), each prepared to run offline: a fresh HOME and XDG directories in a
 * temp dir, configuration pointing its model at an HTTP endpoint on 127.0.0.1 (see
 * docs/host.md "Real agents"). The tests that use them stop before a model call, so the endpoint
 * may be a loopback port nobody listens on.
 */

export type RealAgentName = "opencode" | "claude" | "codex";
export const realAgentNames: readonly RealAgentName[] = ["opencode", "claude", "codex"];

/** A Berth agent config entry (`agents.<id>` in berth.json). */
export interface AgentEntry {
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
}

export interface RealAgentEnvironment {
  readonly name: RealAgentName;
  /** The temp dir holding everything below; removed by `cleanup`. */
  readonly root: string;
  readonly home: string;
  /** The directory to open sessions in (opencode reads its `opencode.json` from here). */
  readonly cwd: string;
  /** Where the agent is told its model lives: `http://127.0.0.1:PORT`. */
  readonly modelUrl: string;
  /** The Berth config entry: absolute command, args, and the environment that makes it offline. */
  readonly entry: AgentEntry;
  /** The `authenticate` method id a client uses before session/new and session/load, if the agent needs one. */
  readonly authMethodId: string | undefined;
  /** Removes the temp dir (stop the agent's processes first). */
  cleanup(): void;
}

export interface PrepareOptions {
  /** Where the model endpoint is; by default an unused loopback port. */
  readonly modelUrl?: string;
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const bin = (name: string) => join(repoRoot, "node_modules", ".bin", name);
const claudeAcpMain = join(repoRoot, "node_modules", "@zed-industries", "claude-agent-acp", "dist", "index.js");

/** A loopback port nobody listens on (bound, read, closed): a model call there is refused at once. */
async function unusedLoopbackUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((ok, fail) => server.once("error", fail).listen(0, "127.0.0.1", ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return `http://127.0.0.1:${port}`;
}

export interface ModelEndpoint {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** `METHOD path` of every request it received, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * A model endpoint on loopback that refuses every call with HTTP 400 and an error body in both the
 * OpenAI and Anthropic shapes. A 400 is not retried by any of the agents, so a prompt ends at once
 * (with an error) after the agent recorded it: enough to make a session loadable without a model.
 */
export async function startRefusingModelEndpoint(): Promise<ModelEndpoint> {
  const requests: string[] = [];
  const server = createHttpServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    request.resume();
    request.on("end", () => {
      response.writeHead(400, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "offline test endpoint: no model here", code: "offline" } }),
      );
    });
  });
  await new Promise<void>((ok, fail) => server.once("error", fail).listen(0, "127.0.0.1", ok));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** The model each agent is configured with (its id as the agent reports it in `models`). */
const offlineModel = { opencode: "fake/fake-model", claude: "default", codex: "gpt-5.4" } as const;

export interface OfflineSetupOptions {
  /** The fresh home directory (XDG directories are made inside it). */
  readonly home: string;
  /** The directory sessions open in (opencode reads its `opencode.json` from here). */
  readonly cwd: string;
  /** `http://127.0.0.1:PORT`, where the model endpoint is. */
  readonly modelUrl: string;
  /** The agent asks over ACP before it runs a shell command (opencode: `"permission": {"bash": "ask"}`). */
  readonly askPermission?: boolean;
}

/**
 * Makes a fresh home (with its XDG directories) and the cwd, and returns the environment that
 * points an agent at them and nowhere else: nothing of the machine's own configuration leaks in.
 */
export function isolatedEnvironment(home: string, cwd: string): Record<string, string> {
  const xdg = {
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local", "state"),
  };
  for (const dir of [home, cwd, ...Object.values(xdg)]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  return {
    HOME: home,
    ...xdg,
    // No proxy, no telemetry, no update checks reaching for the network.
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    DO_NOT_TRACK: "1",
  };
}

/**
 * Writes one agent's offline configuration into a fresh home and cwd and returns its Berth config
 * entry. Variables that would point the agent at a real account (keys, config dirs) are set
 * explicitly, since Berth merges its own environment into the child's.
 */
export function writeOfflineSetup(name: RealAgentName, { home, cwd, modelUrl, askPermission = false }: OfflineSetupOptions): AgentEntry {
  const base = isolatedEnvironment(home, cwd);
  switch (name) {
    case "opencode": {
      writeFileSync(
        join(cwd, "opencode.json"),
        JSON.stringify(
          {
            $schema: "https://opencode.ai/config.json",
            autoupdate: false,
            share: "disabled",
            provider: {
              fake: {
                npm: "@ai-sdk/openai-compatible",
                name: "Fake",
                options: { baseURL: `${modelUrl}/v1`, apiKey: "x" },
                models: { "fake-model": { name: "Fake Model" } },
              },
            },
            model: offlineModel.opencode,
            small_model: offlineModel.opencode,
            ...(askPermission ? { permission: { bash: "ask" } } : {}),
          },
          null,
          2,
        ),
      );
      const env = {
        ...base,
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
        OPENCODE_DISABLE_SHARE: "1",
      };
      return { command: bin("opencode"), args: ["acp"], env };
    }
    case "claude": {
      // Claude Code's shell snapshots and task output go to $CLAUDE_CODE_TMPDIR/claude-<uid> (/tmp by default, left behind).
      const tmp = join(home, "tmp");
      mkdirSync(tmp, { mode: 0o700 });
      const env = {
        ...base,
        CLAUDE_CODE_TMPDIR: tmp,
        ANTHROPIC_BASE_URL: modelUrl,
        ANTHROPIC_API_KEY: "x",
        CLAUDE_CONFIG_DIR: join(home, ".claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        // Running as root, claude refuses its permission-bypass mode unless told it is sandboxed.
        IS_SANDBOX: "1",
      };
      return { command: process.execPath, args: [claudeAcpMain], env };
    }
    case "codex": {
      const codexHome = join(home, ".codex");
      mkdirSync(codexHome, { recursive: true, mode: 0o700 });
      writeFileSync(
        join(codexHome, "config.toml"),
        [
          `model = "${offlineModel.codex}"`,
          // The built-in OpenAI provider, at the loopback endpoint: it requires \`authenticate\` before
          // session/new (-32000 otherwise), which the API-key method satisfies offline.
          `openai_base_url = "${modelUrl}/v1"`,
          // Its default sandbox needs bubblewrap, which is not installed here.
          `sandbox_mode = "danger-full-access"`,
          `approval_policy = "untrusted"`,
          `check_for_update_on_startup = false`,
          ``,
        ].join("\n"),
      );
      const env = { ...base, CODEX_HOME: codexHome, OPENAI_API_KEY: "x", RUST_LOG: "error" };
      return { command: bin("codex-acp"), args: [], env };
    }
  }
}

/** Whether the agent's package is installed (its command is there). */
export function realAgentInstalled(name: RealAgentName): boolean {
  const path = { opencode: bin("opencode"), claude: claudeAcpMain, codex: bin("codex-acp") }[name];
  return existsSync(path);
}

/** `authenticate` method ids a client uses before session/new and session/load, per agent. */
const offlineAuthMethod: Record<RealAgentName, string | undefined> = { opencode: undefined, claude: undefined, codex: "openai-api-key" };

/** Prepares an isolated, offline environment for one agent in a new temp dir. */
export async function prepareRealAgent(name: RealAgentName, options: PrepareOptions = {}): Promise<RealAgentEnvironment> {
  const modelUrl = options.modelUrl ?? (await unusedLoopbackUrl());
  const root = realpathSync(mkdtempSync(join(tmpdir(), `berth-real-${name}-`)));
  const home = join(root, "home");
  const cwd = join(root, "work");
  const entry = writeOfflineSetup(name, { home, cwd, modelUrl });
  const cleanup = () => rmSync(root, { recursive: true, force: true });
  return { name, root, home, cwd, modelUrl, entry, authMethodId: offlineAuthMethod[name], cleanup };
}

/**
 * The client side of the differential script: an ACP client on any stream (an agent's stdio, or
 * Berth's WebSocket), recording every `session/update` and answering nothing else (no turn here
 * gets as far as a tool call).
 */
export class ScriptClient {
  readonly notifications: SessionNotification[] = [];
  initializeResponse!: InitializeResponse;
  private readonly connection: ClientConnection;

  constructor(stream: Stream) {
    const app = client({ name: "berth-real-agent-test" }).onNotification(methods.client.session.update, ({ params }) => {
      this.notifications.push(params);
    });
    this.connection = app.connect(stream);
  }

  get agent() {
    return this.connection.agent;
  }

  get closed(): Promise<void> {
    return this.connection.closed;
  }

  async initialize(capabilities: ClientCapabilities = clientCapabilities): Promise<InitializeResponse> {
    this.initializeResponse = await this.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: capabilities,
      clientInfo: { name: "berth-real-agent-test", version: "0" },
    });
    return this.initializeResponse;
  }

  newSession(cwd: string, meta?: Record<string, unknown>): Promise<NewSessionResponse> {
    return this.agent.request(methods.agent.session.new, { cwd, mcpServers: [], ...(meta ? { _meta: meta } : {}) });
  }

  loadSession(sessionId: string, cwd: string): Promise<LoadSessionResponse> {
    return this.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
  }

  authenticate(methodId: string): Promise<unknown> {
    return this.agent.request(methods.agent.authenticate, { methodId });
  }

  setConfigOption(sessionId: string, configId: string, value: string): Promise<SetSessionConfigOptionResponse> {
    return this.agent.request(methods.agent.session.setConfigOption, { sessionId, configId, value });
  }

  setMode(sessionId: string, modeId: string): Promise<unknown> {
    return this.agent.request(methods.agent.session.setMode, { sessionId, modeId });
  }

  /** `session/set_model` (unstable in ACP v1, so not among the SDK's stable method names). */
  setModel(sessionId: string, modelId: string): Promise<unknown> {
    return this.agent.request("session/set_model", { sessionId, modelId });
  }

  /** One prompt; against the refusing endpoint it ends in an error, after the agent recorded it. */
  async promptSettled(sessionId: string, text: string): Promise<{ ok: true; value: PromptResponse } | { ok: false; error: unknown }> {
    try {
      return { ok: true, value: await this.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }) };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /** The updates of one kind for a session, in order. */
  updates(sessionId: string, kind: SessionNotification["update"]["sessionUpdate"]): SessionNotification["update"][] {
    return this.notifications.filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind).map((n) => n.update);
  }

  /** The text of the `user_message_chunk`s of a session (a replayed history shows the prompts here). */
  userText(sessionId: string): string {
    return this.updates(sessionId, "user_message_chunk")
      .map((u) => (u.sessionUpdate === "user_message_chunk" && u.content.type === "text" ? u.content.text : ""))
      .join("");
  }

  close(): Promise<void> {
    this.connection.close();
    return this.connection.closed;
  }
}

/** What the test client advertises, directly and through Berth alike. */
const clientCapabilities: ClientCapabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

/** A `RequestError`'s code and data, for comparing errors directly and through Berth. */
export function errorShape(error: unknown): { code: unknown; data: unknown } {
  const { code, data } = error as { code?: unknown; data?: unknown };
  return { code, data };
}

/** The `models.availableModels` ids of a session/new or session/load response (`models` is unstable in ACP v1). */
export function modelIds(response: object): string[] | undefined {
  return (response as { models?: { availableModels: Array<{ modelId: string }> } }).models?.availableModels.map((m) => m.modelId);
}

/** A real agent run directly over its stdio, in its own process group. */
export class DirectAgent extends ScriptClient {
  readonly stderr: string[] = [];
  /** Milliseconds from spawn to the `initialize` response. */
  startupMs = 0;

  private constructor(private readonly child: ChildProcess) {
    child.stdin!.on("error", () => undefined);
    super(ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => this.stderr.push(chunk));
  }

  /** Spawns the agent as Berth would (its environment merged over this one) and initializes it. */
  static async start(env: Pick<RealAgentEnvironment, "cwd" | "entry"> & { readonly name: string }): Promise<DirectAgent> {
    const started = Date.now();
    const child = spawn(env.entry.command, env.entry.args, {
      cwd: env.cwd,
      env: { ...process.env, ...env.entry.env },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    live.add(child);
    const agent = new DirectAgent(child);
    try {
      await agent.initialize();
    } catch (error) {
      await agent.stop();
      throw new Error(`${env.name} did not initialize: ${String(error)}\n${agent.stderr.join("")}`);
    }
    agent.startupMs = Date.now() - started;
    return agent;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Stops the agent's whole process group (SIGTERM, a bounded wait, then SIGKILL) and waits until it is gone. */
  async stop(): Promise<void> {
    this.close().catch(() => undefined);
    await stopGroup(this.child);
  }
}

const live = new Set<ChildProcess>();

async function stopGroup(child: ChildProcess): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return;
  const members = [pgid, ...groupMembers(pgid).map((member) => member.pid)];
  signalGroup(pgid, "SIGTERM");
  if ((await waitUntilGone(members, 3_000)).length > 0) signalGroup(pgid, "SIGKILL");
  const left = await waitUntilGone(members, 5_000);
  live.delete(child);
  if (left.length > 0) throw new Error(`processes of group ${pgid} still running: ${left.join(", ")}`);
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is gone already.
  }
}

/** For `afterAll`: stops every agent a direct test started and did not stop. */
export async function stopAllDirectAgents(): Promise<void> {
  await Promise.all([...live].map((child) => stopGroup(child)));
}

/** An ACP client on Berth's WebSocket endpoint, bound to one agent (`?agent=ID`), not yet initialized. */
export function connectThroughBerth(acpUrl: string, token: string, agentId: string): ScriptClient {
  return new ScriptClient(
    createWebSocketStream(`${acpUrl}?agent=${encodeURIComponent(agentId)}`, { WebSocket, headers: { authorization: `Bearer ${token}` } }),
  );
}

/**
 * What each agent advertises and how it behaves, found by driving it directly (see
 * test/real-agents/direct.test.ts, which checks every line) and expected unchanged through Berth.
 */
export interface AgentFacts {
  readonly authMethodIds: readonly string[];
  readonly promptCapabilities: Record<string, boolean>;
  /** The ids of the `configOptions` in the session/new response, in order. */
  readonly configOptionIds: readonly string[];
  /** `modes.availableModes` ids, when the response has `modes`. */
  readonly modeIds?: readonly string[];
  /** `models.availableModels` ids, when the response has `models`. */
  readonly modelIds?: readonly string[];
  /** A config option the test sets, and the value it sets (not the default). */
  readonly setOption: { readonly configId: string; readonly value: string; readonly default: string };
  /** session/new answers -32000 until `authenticate` with this method. */
  readonly newNeedsAuth?: string;
  /** After a prompt and a restart of the agent, it still reports `setOption.value` when the session is loaded. */
  readonly remembersOptionAcrossRestart: boolean;
}

export const agentFacts: Record<RealAgentName, AgentFacts> = {
  opencode: {
    authMethodIds: ["opencode-login"],
    promptCapabilities: { embeddedContext: true, image: true },
    configOptionIds: ["model", "mode"],
    setOption: { configId: "mode", value: "plan", default: "build" },
    // Once prompted in a mode, the session keeps it (the message records its agent); a model set
    // with no prompt since is forgotten.
    remembersOptionAcrossRestart: true,
  },
  claude: {
    authMethodIds: [],
    promptCapabilities: { embeddedContext: true, image: true },
    configOptionIds: ["mode", "model"],
    modeIds: ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"],
    modelIds: ["default", "sonnet[1m]", "opus[1m]", "haiku"],
    setOption: { configId: "mode", value: "plan", default: "default" },
    remembersOptionAcrossRestart: false,
  },
  codex: {
    authMethodIds: ["chatgpt", "codex-api-key", "openai-api-key"],
    promptCapabilities: { audio: false, embeddedContext: true, image: true },
    configOptionIds: ["model", "reasoning_effort"],
    setOption: { configId: "reasoning_effort", value: "high", default: "medium" },
    newNeedsAuth: "openai-api-key",
    remembersOptionAcrossRestart: false,
  },
};
