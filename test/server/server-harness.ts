import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  client,
  methods,
  PROTOCOL_VERSION,
  type ClientCapabilities,
  type ClientConnection,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type InitializeResponse,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type WriteTextFileRequest,
  type WriteTextFileResponse,
} from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { pino } from "pino";
import WebSocket from "ws";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/load-config.js";
import { silentLogger, type Logger } from "../../src/host/logger.js";
import { startBerth, type BerthOptions, type RunningBerth } from "../../src/server/serve.js";
import { waitUntil, waitUntilGone } from "../support/process-table.js";

export { processIsRunning, waitUntil, waitUntilGone } from "../support/process-table.js";

export interface BerthFixture {
  readonly berth: RunningBerth;
  readonly dataDir: string;
  readonly workDir: string;
  readonly url: string;
  readonly acpUrl: string;
  readonly token: string;
  /** `fetch` on the server with the token. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** An ACP client over WebSocket (or Streamable HTTP), initialized. */
  connect(options?: ClientOptions): Promise<AcpTestClient>;
  /** Stops this server and its host (the data directory stays). */
  stop(): Promise<void>;
}

type FixtureOptions = { config?: ConfigInput; dataDir?: string; workDir?: string; log?: Logger } & Partial<
  Pick<BerthOptions, "maxMessageBytes" | "maxBufferedBytes" | "httpClientIdleMs" | "events" | "webDir" | "tickets" | "loginCommands">
>;

const running: BerthFixture[] = [];
const clients: AcpTestClient[] = [];
const tempDirs: string[] = [];
/** Every agent child any fixture started, checked for leftovers after each test. */
const agentPids = new Set<number>();

export function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  tempDirs.push(dir);
  return dir;
}

/** A real Berth (host + server) on 127.0.0.1, a free port and a temp data directory, with the demo agent. */
export async function startFixture(options: FixtureOptions = {}): Promise<BerthFixture> {
  const dataDir = options.dataDir ?? tempDir("berth-server-data-");
  const workDir = options.workDir ?? tempDir("berth-server-work-");
  const berth = await startBerth({
    config: parseConfig(options.config ?? {}),
    dataDir,
    listenHost: "127.0.0.1",
    port: 0,
    log: options.log ?? silentLogger(),
    maxMessageBytes: options.maxMessageBytes,
    maxBufferedBytes: options.maxBufferedBytes,
    httpClientIdleMs: options.httpClientIdleMs,
    events: options.events,
    webDir: options.webDir,
    tickets: options.tickets,
    loginCommands: options.loginCommands,
  });
  berth.host.onRecord(({ record }) => {
    if (record.kind === "child_acquired" || record.kind === "agent_asked") agentPids.add(record.pid);
  });
  const { url, acpUrl } = berth.server;
  const fixture: BerthFixture = {
    berth,
    dataDir,
    workDir,
    url,
    acpUrl,
    token: berth.token,
    api: (path, init = {}) =>
      fetch(url + path, { ...init, headers: { authorization: `Bearer ${berth.token}`, ...(init.headers as Record<string, string>) } }),
    connect: (clientOptions) => AcpTestClient.connect(acpUrl, { token: berth.token, ...clientOptions }),
    stop: async () => {
      running.splice(running.indexOf(fixture), 1);
      await berth.shutdown();
    },
  };
  running.push(fixture);
  return fixture;
}

/** A logger keeping the host's log lines, for a fixture's `log`. */
export function capturedLog(): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

/** For `afterEach`: closes clients and servers, checks no agent process is left, removes temp dirs. */
export async function cleanUp(): Promise<void> {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((fixture) => fixture.berth.shutdown()));
  const left = await waitUntilGone([...agentPids]);
  agentPids.clear();
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  if (left.length > 0) throw new Error(`agent processes left running: ${left.join(", ")}`);
}

export interface ClientOptions {
  /** The transport profile (default `websocket`). */
  readonly transport?: "websocket" | "http";
  /** Binds the connection to an agent with `?agent=`. */
  readonly agent?: string;
  readonly token?: string;
  readonly headers?: Record<string, string>;
  readonly capabilities?: ClientCapabilities;
  /** Answers permission requests as they come (default: leave them for the test). */
  readonly onPermission?: (question: AskedQuestion<RequestPermissionRequest>) => void;
  /** Answers `fs/*` requests as an editor would (declare them in `capabilities` too); without one, the SDK's -32601. */
  readonly files?: TestClientFiles;
}

/** An editor's file system as a test plays it; `signal` is aborted when the server withdraws the request. */
interface TestClientFiles {
  read?(params: ReadTextFileRequest, signal: AbortSignal): Promise<ReadTextFileResponse>;
  write?(params: WriteTextFileRequest, signal: AbortSignal): Promise<WriteTextFileResponse>;
}

/** A request the server sent this client; the test answers it or sees it withdrawn. */
export interface AskedQuestion<P> {
  readonly params: P;
  /** Aborted when the server sends `$/cancel_request` for it (or the connection closes). */
  readonly signal: AbortSignal;
  answer(response: P extends RequestPermissionRequest ? RequestPermissionResponse : CreateElicitationResponse): void;
}

/** An ACP client as an editor would run it, recording what the server sends. */
export class AcpTestClient {
  readonly notifications: SessionNotification[] = [];
  readonly permissions: AskedQuestion<RequestPermissionRequest>[] = [];
  readonly elicitations: AskedQuestion<CreateElicitationRequest>[] = [];
  /** The `fs/*` requests the server sent, in order. */
  readonly fileRequests: Array<{ method: string; params: ReadTextFileRequest | WriteTextFileRequest }> = [];
  /** What the server answered to `initialize`. */
  initialized!: InitializeResponse;
  private connection!: ClientConnection;

  private constructor() {}

  static async connect(acpUrl: string, options: ClientOptions): Promise<AcpTestClient> {
    const test = new AcpTestClient();
    const headers = { ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }), ...options.headers };
    const app = client({ name: "berth-test-client" })
      .onNotification(methods.client.session.update, ({ params }) => {
        test.notifications.push(params);
      })
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) =>
        test.asked(test.permissions, params, signal, { outcome: { outcome: "cancelled" } }, options.onPermission),
      )
      .onRequest(methods.client.elicitation.create, ({ params, signal }) => test.asked(test.elicitations, params, signal, { action: "cancel" }));
    const { read, write } = options.files ?? {};
    if (read)
      app.onRequest(methods.client.fs.readTextFile, ({ method, params, signal }) => {
        test.fileRequests.push({ method, params });
        return read(params, signal);
      });
    if (write)
      app.onRequest(methods.client.fs.writeTextFile, ({ method, params, signal }) => {
        test.fileRequests.push({ method, params });
        return write(params, signal);
      });
    const url = new URL(acpUrl);
    if (options.agent !== undefined) url.searchParams.set("agent", options.agent);
    if (options.transport === "http") url.protocol = "http:";
    test.connection = app.connect(
      options.transport === "http" ? createHttpStream(url.href, { headers }) : createWebSocketStream(url.href, { WebSocket, headers }),
    );
    clients.push(test);
    test.initialized = await test.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: options.capabilities ?? { elicitation: { form: {} } },
      clientInfo: { name: "berth-test-client", version: "0" },
    });
    return test;
  }

  get agent() {
    return this.connection.agent;
  }

  get closed(): Promise<void> {
    return this.connection.closed;
  }

  async newSession(cwd: string, meta: Record<string, unknown> = {}): Promise<string> {
    return (await this.agent.request(methods.agent.session.new, { cwd, mcpServers: [], _meta: meta })).sessionId;
  }

  load(sessionId: string, cwd: string) {
    return this.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
  }

  prompt(sessionId: string, text: string) {
    return this.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  /** The text of every message chunk of a kind, in order. */
  texts(sessionId: string, kind: "agent_message_chunk" | "user_message_chunk" = "agent_message_chunk"): string {
    return this.notifications
      .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind)
      .map(({ update }) => (update.sessionUpdate === kind && update.content.type === "text" ? update.content.text : ""))
      .join("");
  }

  async waitForText(sessionId: string, text: string): Promise<void> {
    await waitUntil(() => this.texts(sessionId).includes(text), `the client received "${text}"`);
  }

  async close(): Promise<void> {
    this.connection.close();
    await this.connection.closed;
  }

  private asked<P, R>(
    list: AskedQuestion<P>[],
    params: P,
    signal: AbortSignal,
    onAbort: R,
    onAsk?: (question: AskedQuestion<P>) => void,
  ): Promise<R> {
    return new Promise<R>((resolve) => {
      const question = { params, signal, answer: resolve as (response: unknown) => void } as AskedQuestion<P>;
      signal.addEventListener("abort", () => resolve(onAbort), { once: true });
      list.push(question);
      onAsk?.(question);
    });
  }
}

/** A bare WebSocket speaking JSON-RPC by hand, for frames no SDK would send. */
export class RawSocket {
  readonly messages: Array<Record<string, unknown>> = [];
  /** Each message's text as it came. */
  readonly frames: string[] = [];
  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const frame = data.toString();
      this.frames.push(frame);
      this.messages.push(JSON.parse(frame) as Record<string, unknown>);
    });
  }

  static open(acpUrl: string, token: string): Promise<RawSocket> {
    const ws = new WebSocket(acpUrl, { headers: { authorization: `Bearer ${token}` } });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new RawSocket(ws)));
      ws.once("error", reject);
    });
  }

  send(message: unknown): void {
    this.ws.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  /** The next message with this id (a response). */
  async response(id: unknown): Promise<Record<string, unknown>> {
    await waitUntil(() => this.messages.some((m) => m.id === id && ("result" in m || "error" in m)), `a response to request ${JSON.stringify(id)}`);
    return this.messages.find((m) => m.id === id && ("result" in m || "error" in m))!;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.ws.readyState === WebSocket.CLOSED) return resolve();
      this.ws.once("close", () => resolve());
      this.ws.close();
    });
  }
}

/** The status of a refused WebSocket upgrade (or `open`). */
export function upgradeOutcome(acpUrl: string, headers: Record<string, string>): Promise<number | "open"> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(acpUrl, { headers });
    ws.once("open", () => {
      ws.close();
      resolve("open");
    });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once("error", (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

export const initializeParams = { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} };

export type ToolUpdate = Extract<SessionNotification["update"], { sessionUpdate: "tool_call" | "tool_call_update" }>;

/** The tool call updates of a session as a client received them, in order. */
export function toolUpdates(client: AcpTestClient, sessionId: string): ToolUpdate[] {
  return client.notifications
    .filter((n) => n.sessionId === sessionId)
    .map((n) => n.update)
    .filter((u): u is ToolUpdate => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
}
