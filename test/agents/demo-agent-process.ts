import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  client,
  methods,
  RequestError,
  ndJsonStream,
  PROTOCOL_VERSION,
  type ClientCapabilities,
  type ClientConnection,
  type ClientContext,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type InitializeResponse,
  type LoadSessionResponse,
  type McpServer,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  type StopReason,
} from "@agentclientprotocol/sdk";
import { ShellTerminals } from "./shell-terminals.js";

export const demoAgentMain = fileURLToPath(new URL("../../dist/agents/demo-agent/main.js", import.meta.url));

/** How the test's "user" answers the agent's questions. */
export interface ClientAnswers {
  permission(request: RequestPermissionRequest): RequestPermissionResponse | Promise<RequestPermissionResponse>;
  elicitation(request: CreateElicitationRequest): CreateElicitationResponse | Promise<CreateElicitationResponse>;
  /** Any request the SDK does not know, such as a `_`-prefixed extension method. */
  extension(method: string, params: unknown): unknown;
}

export interface ExtensionNotification {
  method: string;
  params: unknown;
}

export interface StartOptions {
  stateDir: string;
  /** Extra command-line arguments, e.g. `--no-load`. */
  args?: string[];
  clientCapabilities?: ClientCapabilities;
  /** Extra environment variables for the agent, e.g. `BERTH_DEMO_REQUIRE_AUTH`. */
  env?: NodeJS.ProcessEnv;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const fullClientCapabilities: ClientCapabilities = { terminal: true, elicitation: { form: {} } };

const unanswered = (what: string) => (): never => {
  throw new Error(`the test gave no answer for ${what}`);
};

/**
 * The compiled demo agent as a real child process (its own process group),
 * driven over stdio by the SDK's client side.
 */
export class DemoAgentProcess {
  readonly updates: SessionNotification[] = [];
  readonly permissionRequests: RequestPermissionRequest[] = [];
  readonly elicitationRequests: CreateElicitationRequest[] = [];
  readonly extensionNotifications: ExtensionNotification[] = [];
  readonly terminals = new ShellTerminals();
  answers: ClientAnswers = {
    permission: unanswered("session/request_permission"),
    elicitation: unanswered("elicitation/create"),
    // What a client without the handler answers.
    extension: (method) => {
      throw RequestError.methodNotFound(method);
    },
  };
  readonly exited: Promise<Exit>;
  readonly connection: ClientConnection;
  stderr = "";
  private readonly child: ChildProcess;
  private readonly updateWaiters = new Set<() => void>();

  private constructor(options: StartOptions) {
    if (!existsSync(demoAgentMain)) throw new Error(`${demoAgentMain} is missing: run \`npm run build\` first`);
    // The agent's own BERTH_DEMO_* settings come only from the test.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("BERTH_DEMO_")));
    Object.assign(env, options.env);
    this.child = spawn(process.execPath, [demoAgentMain, "--state-dir", options.stateDir, ...(options.args ?? [])], {
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
      env,
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.child.stderr?.on("data", (chunk: Buffer) => (this.stderr += chunk.toString("utf8")));
    // Once the agent is gone, writes to its stdin fail; the connection reports that itself.
    this.child.stdin?.on("error", () => undefined);
    const stream = ndJsonStream(
      Writable.toWeb(this.child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(this.child.stdout!) as ReadableStream<Uint8Array>,
    );
    this.connection = this.clientApp().connect(stream);
  }

  static async start(options: StartOptions): Promise<{ agent: DemoAgentProcess; initialized: InitializeResponse }> {
    const agent = new DemoAgentProcess(options);
    const initialized = await agent.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: options.clientCapabilities ?? fullClientCapabilities,
      clientInfo: { name: "berth-demo-agent-test", version: "0" },
    });
    return { agent, initialized };
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Calls agent-side methods. */
  get agent(): ClientContext {
    return this.connection.agent;
  }

  /** Creates a session and waits for its `available_commands_update`, so later updates are the test's own. */
  async newSession(cwd: string, mcpServers: McpServer[] = []): Promise<string> {
    const from = this.updates.length;
    const { sessionId } = await this.agent.request(methods.agent.session.new, { cwd, mcpServers });
    await this.waitForUpdate(sessionId, isCommandsUpdate, from);
    return sessionId;
  }

  /** Loads a session and waits for the `available_commands_update` that follows the response. */
  async loadSession(sessionId: string, cwd: string, mcpServers: McpServer[] = []): Promise<LoadSessionResponse> {
    const from = this.updates.length;
    const response = await this.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers });
    await this.waitForUpdate(sessionId, isCommandsUpdate, from);
    return response;
  }

  /** Sends one text prompt and returns its stop reason with the updates it produced. */
  async prompt(sessionId: string, text: string): Promise<{ stopReason: StopReason; updates: SessionUpdate[] }> {
    const from = this.updates.length;
    const { stopReason } = await this.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    return { stopReason, updates: await this.updatesSince(from, sessionId) };
  }

  /**
   * Updates of `sessionId` received since index `from`. Notification handlers
   * run a few microtasks after their message arrives, possibly after a later
   * response has resolved; one macrotask lets every one of them finish.
   */
  async updatesSince(from: number, sessionId: string): Promise<SessionUpdate[]> {
    await new Promise((resolve) => setImmediate(resolve));
    return this.updates
      .slice(from)
      .filter((notification) => notification.sessionId === sessionId)
      .map((notification) => notification.update);
  }

  /** Resolves with the first update from index `from` on (already received or still to come) that matches. */
  async waitForUpdate(sessionId: string, matches: (update: SessionUpdate) => boolean, from = 0): Promise<SessionUpdate> {
    for (;;) {
      const found = this.updates.slice(from).find((n) => n.sessionId === sessionId && matches(n.update));
      if (found) return found.update;
      await new Promise<void>((resolve) => this.updateWaiters.add(resolve));
    }
  }

  /** Closes stdin, lets the agent exit, then stops its whole process group and every terminal. */
  async stop(): Promise<Exit> {
    this.child.stdin?.end();
    const exit = await Promise.race([this.exited, delay(5_000).then(() => undefined)]);
    killGroup(this.pid, "SIGKILL");
    this.connection.close();
    await this.terminals.releaseAll();
    return exit ?? this.exited;
  }

  private clientApp() {
    const terminals = this.terminals;
    return client({ name: "berth-demo-agent-test" })
      .onNotification(methods.client.session.update, ({ params }) => {
        this.updates.push(params);
        for (const wake of this.updateWaiters) wake();
        this.updateWaiters.clear();
      })
      .onRequest(methods.client.session.requestPermission, ({ params }) => {
        this.permissionRequests.push(params);
        return this.answers.permission(params);
      })
      .onRequest(methods.client.elicitation.create, ({ params }) => {
        this.elicitationRequests.push(params);
        return this.answers.elicitation(params);
      })
      .onRequest(methods.client.terminal.create, ({ params }) => terminals.create(params))
      .onRequest(methods.client.terminal.output, ({ params }) => terminals.output(params.terminalId))
      .onRequest(methods.client.terminal.waitForExit, ({ params }) => terminals.waitForExit(params.terminalId))
      .onRequest(methods.client.terminal.kill, ({ params }) => terminals.kill(params.terminalId))
      .onRequest(methods.client.terminal.release, ({ params }) => terminals.release(params.terminalId))
      .onRequest("*", ({ method, params }) => this.answers.extension(method, params))
      .onNotification("*", ({ method, params }) => {
        this.extensionNotifications.push({ method, params });
      });
  }
}

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function isCommandsUpdate(update: SessionUpdate): boolean {
  return update.sessionUpdate === "available_commands_update";
}

/** The text of an update if it is a text message chunk of the given kind. */
export function chunkText(update: SessionUpdate, kind: "agent_message_chunk" | "user_message_chunk"): string | undefined {
  return update.sessionUpdate === kind && update.content.type === "text" ? update.content.text : undefined;
}

/** All agent message text in `updates`, concatenated. */
export function agentText(updates: SessionUpdate[]): string {
  return updates.map((update) => chunkText(update, "agent_message_chunk") ?? "").join("");
}
