import { Writable } from "node:stream";
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type AgentCapabilities,
  type AnyMessage,
  type AuthenticateRequest,
  type ClientCapabilities,
  type ClientConnection,
  type Implementation,
  type InitializeResponse,
  type LoadSessionRequest,
  type LoadSessionResponse,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptRequest,
  type PromptResponse,
  type ResumeSessionRequest,
  type ResumeSessionResponse,
  type SessionNotification,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { methods as unstableMethods } from "@agentclientprotocol/sdk/unstable";
import { Listeners } from "../lifecycle/listeners.js";
import { TerminalOutput } from "../location/terminal-output.js";
import { describeExit, spawnGroup, type ExitStatus, type ProcessGroupLedger, type SpawnedGroup } from "../processes/index.js";
import type { AgentClientHandlers, ClientFiles } from "./agent-client-handlers.js";
import { PromptsInFlight, type RequestId } from "./prompts-in-flight.js";
import { EMBEDDED_TERMINALS_META } from "../protocol/embedded-terminals.js";
import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import { divertSessionUpdates } from "./session-update-fast-path.js";
import type { TurnBudget } from "./turn-budget.js";
import { berthVersion } from "../version.js";
import { terminalLoginCapabilities } from "../protocol/terminal-logins.js";

export interface AgentCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface AgentChildOptions {
  readonly agentId: string;
  readonly sessionId: string;
  readonly command: AgentCommand;
  readonly cwd: string;
  readonly handlers: AgentClientHandlers;
  readonly initializeTimeoutMs: number;
  readonly stopTimeoutMs: number;
  readonly ledger?: ProcessGroupLedger;
  /** One line of the agent's stderr, with its session. */
  readonly onStderrLine?: (line: string) => void;
  /** Who the agent is told its client is: the client that created the session, else Berth. */
  readonly clientInfo?: Implementation | null;
  /** `_meta` of the creating client's `initialize`, passed on as it came. */
  readonly initializeMeta?: Record<string, unknown> | null;
  /** Replayed right after `initialize`, so a child started later is as logged in as the first. */
  readonly authenticate?: AuthenticateRequest;
  /** The session's sandbox, if it has one. */
  readonly sandbox?: SandboxPlan;
  /** Lines of output handled a turn, shared with the host's other agents (none: every line as it arrives). */
  readonly turnBudget?: TurnBudget;
}

/**
 * What Berth declares to every agent: it serves files, terminals and terminal logins itself, so the agent keeps working
 * while no client is attached, and offers every login it has (each client is shown those it declared, docs/host.md).
 */
export const berthClientCapabilities: ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
  elicitation: { form: {} },
  ...terminalLoginCapabilities,
  // Berth can always show a terminal the agent embeds in its updates: as sent to a client that declared it, else as text.
  _meta: { ...terminalLoginCapabilities._meta, [EMBEDDED_TERMINALS_META]: true },
};

/** Berth's own name towards agents when no client's is known. */
const berthClientInfo: Implementation = { name: "berth", title: "Berth", version: berthVersion };

export class AgentStartError extends Error {
  override readonly name = "AgentStartError";
}

/**
 * One ACP agent process serving one Berth session:
 * `starting` → `ready` → `stopping` → `stopped`, or → `exited` when it dies on its own.
 */
export type AgentChildState = "starting" | "ready" | "stopping" | "stopped" | "exited";

const STDERR_TAIL_BYTES = 64 * 1024;
const CLOSE_REQUEST_TIMEOUT_MS = 2_000;
/** After a write to the agent failed or its connection closed at start: how long its exit is awaited. */
const EXIT_AFTER_BROKEN_CONNECTION_MS = 1_000;
/** How long the end of the agent's stderr is awaited for an error message (a grandchild may hold the pipe). */
const STDERR_DRAIN_MS = 500;

export class AgentChild {
  state: AgentChildState = "starting";
  /** The agent's whole `initialize` answer, as it came. */
  initializeResponse: InitializeResponse = { protocolVersion: PROTOCOL_VERSION };
  /**
   * Settles once nothing of the child runs any more: its whole process group stopped, by Berth or after it died on its
   * own (what it left in its group may still write to its stdout until then). Never rejects.
   */
  readonly ended: Promise<void>;
  private stopping: Promise<void> | undefined;
  /** Why Berth stopped the child, if it said: named in the error of a request the stop cut short. */
  private stoppedBecause: string | undefined;
  /** The connection to the agent ended (its stdout closed, or Berth closed it). */
  private connectionClosed = false;
  private agentSessionId: string | undefined;
  /** While `session/load` runs, the agent replays history: those updates are not new events. */
  private replaying = false;
  private readonly exitListeners = new Listeners<ExitStatus>();
  private readonly updateListeners = new Listeners<SessionUpdate>();
  /** Whose prompt each `fs/*` request of the agent's belongs to, by the order on the wire. */
  private readonly prompts = new PromptsInFlight<ClientFiles>();
  /** By a prompt request's params, as the SDK writes them, the files given with it, until it is written. */
  private readonly prompters = new WeakMap<object, ClientFiles>();
  /** By a prompt request's params, the id the SDK wrote it under. */
  private readonly promptIds = new WeakMap<object, RequestId>();
  /** Why the agent's stdout is not being read, if it is not. */
  private readonly outputPaused = new Set<"backlog" | "budget">();
  /** Told when lines that waited for the budget have been handled. */
  private readonly budgetWaits: Array<() => void> = [];
  /** The agent is gone: its output is no longer paced. */
  private outputUnpaced = false;

  private constructor(
    private readonly options: AgentChildOptions,
    private readonly group: SpawnedGroup,
    private readonly connection: ClientConnection,
    private readonly stderr: TerminalOutput,
  ) {
    this.ended = group.exited
      .then(async (status) => {
        // Shared with Berth's own stop, if it began one: this only waits for it.
        const stopping = group.stop();
        try {
          if (this.state === "starting" || this.state === "ready") {
            this.state = "exited";
            // Whatever it left in its group (an MCP server behind `npx`, a `sleep &`) goes with it (the stop above).
            this.exitListeners.emit(status);
          }
        } finally {
          await stopping;
          // What its group wrote before it was gone is read (the pipes' end), not dropped as late words: held output too,
          // and lines waiting for the budget, handled before `ended` settles (a stopping host drops what comes later).
          this.outputUnpaced = true;
          this.outputPaused.delete("backlog");
          this.pauseOutput();
          await group.outputDrained();
          await this.budgetWaitOver();
        }
      })
      // Its exit listeners report their own failures (AgentChildren logs them); a failed stop is the sweep's.
      .catch(() => undefined);
    // A closed stdout is as final as an exit: the protocol is gone. Stopping the group makes the exit follow.
    void connection.closed.then(() => {
      this.connectionClosed = true;
      if (this.state === "starting" || this.state === "ready") void group.stop().catch(() => undefined);
    });
  }

  /** An update from the agent's stdout, in order; history replayed by `session/load` is dropped. */
  private received(notification: SessionNotification, line?: string): void {
    // Another conversation's (a fork made in this process, opencode and Claude announce its commands): another session's.
    if (this.replaying || (this.agentSessionId !== undefined && notification.sessionId !== this.agentSessionId)) return;
    this.options.handlers.sessionUpdate(notification, line);
    this.updateListeners.emit(notification.update);
  }

  /** A message on its way to the agent's stdin: a prompt is in flight from here on, with the files given with it. */
  private writing(message: AnyMessage): void {
    if (!("method" in message)) {
      if ("id" in message) this.prompts.replied(message.id);
      return;
    }
    if (message.method !== methods.agent.session.prompt || !("id" in message)) return;
    const params = message.params;
    if (typeof params === "object" && params !== null) this.promptIds.set(params, message.id);
    this.prompts.sent(message.id, typeof params === "object" && params !== null ? this.prompters.get(params) : undefined);
  }

  /** Told each new update the agent sends (not history a `session/load` replays), in order, until the returned call. */
  onUpdate(listener: (update: SessionUpdate) => void): () => void {
    return this.updateListeners.add(listener);
  }

  static async start(options: AgentChildOptions): Promise<AgentChild> {
    const group = await spawnGroup({
      command: options.command.command,
      args: options.command.args,
      cwd: options.cwd,
      env: { ...process.env, ...options.command.env },
      stdio: ["pipe", "pipe", "pipe"],
      kind: "agent",
      label: `agent ${options.agentId} for session ${options.sessionId}`,
      ledger: options.ledger,
      stop: { graceMs: options.stopTimeoutMs },
      sandbox: options.sandbox,
    }).catch((error: unknown) => {
      throw new AgentStartError(`cannot start agent "${options.agentId}": ${error instanceof Error ? error.message : String(error)}`);
    });
    const stderr = new TerminalOutput(STDERR_TAIL_BYTES);
    forwardStderr(group, stderr, options.onStderrLine);
    // Writes to a child that already died surface as EPIPE on stdin; its exit is handled elsewhere.
    group.child.stdin!.on("error", () => undefined);
    const wire = ndJsonStream(
      Writable.toWeb(group.child.stdin!) as WritableStream<Uint8Array>,
      divertSessionUpdates(
        group.child.stdout!,
        {
          onUpdate: (notification, line) => child.received(notification, line),
          onResponse: (id) => {
            // The agent answers session/load after replaying; updates after that answer are new, even in the same read.
            child.replaying = false;
            child.prompts.answered(id);
          },
          onRequest: (id, method) => {
            if (FILE_METHODS.has(method)) child.prompts.asked(id);
          },
          onRefused: (reason) => options.onStderrLine?.(`[berth] refused a message from the agent: ${reason}`),
          // One whole line per write: it cannot land inside a line the SDK writes.
          answerAgent: (line) => {
            if (group.child.stdin?.writable) group.child.stdin.write(line);
          },
        },
        undefined,
        options.turnBudget && {
          // Once the agent is gone, what is left of its pipe is handled at once: its exit waits for it (`ended`).
          take: () => child.outputUnpaced || options.turnBudget!.take(),
          next: (handle) => options.turnBudget!.next(handle),
          pause: () => child.pauseOutput("budget"),
          resume: () => child.pauseOutput("budget", false),
        },
      ),
    );
    // A prompt counts as in flight from before its line is written: the agent cannot answer it, or ask anything for it, earlier.
    const stream = { readable: wire.readable, writable: observedWrites(wire.writable, (message) => child.writing(message)) };
    const connection = berthClient(options.handlers, (id) => child.prompts.ownerOf(id)).connect(stream);
    const child: AgentChild = new AgentChild(options, group, connection, stderr);
    await child.initialize();
    return child;
  }

  /**
   * `held`: the agent's stdout is no longer read (the host has too much waiting to be stored), so its pipe fills and the
   * agent waits on it; `flowing`: read again. Its exit reads the rest whatever this says.
   */
  readOutput(mode: "held" | "flowing"): void {
    if (this.state !== "starting" && this.state !== "ready") return;
    this.pauseOutput("backlog", mode === "held");
  }

  /** The agent's stdout is read while nothing pauses it: the host's backlog, or this turn's line budget spent. */
  private pauseOutput(reason?: "backlog" | "budget", paused = true): void {
    if (reason !== undefined) {
      if (paused) this.outputPaused.add(reason);
      else this.outputPaused.delete(reason);
    }
    if (reason === "budget" && !paused) for (const waited of this.budgetWaits.splice(0)) waited();
    if (this.outputPaused.size > 0) this.group.child.stdout?.pause();
    else this.group.child.stdout?.resume();
  }

  /** Settles once no line read from the agent waits for the budget (at once if none does). */
  private budgetWaitOver(): Promise<void> {
    if (!this.outputPaused.has("budget")) return Promise.resolve();
    return new Promise((resolve) => this.budgetWaits.push(resolve));
  }

  get pid(): number {
    return this.group.entry.pgid;
  }

  get agentId(): string {
    return this.options.agentId;
  }

  /** The Berth session this child serves. */
  get sessionId(): string {
    return this.options.sessionId;
  }

  get capabilities(): AgentCapabilities {
    return this.initializeResponse.agentCapabilities ?? {};
  }

  /** The agent's own id of the session this child serves, once it has one. */
  get agentSession(): string | undefined {
    return this.agentSessionId;
  }

  get canLoad(): boolean {
    return this.capabilities.loadSession === true;
  }

  get canResume(): boolean {
    return this.capabilities.sessionCapabilities?.resume != null;
  }

  /** `session/fork` is still in ACP's unstable schema, which the stable types do not name. */
  get canFork(): boolean {
    const sessionCapabilities: Record<string, unknown> = this.capabilities.sessionCapabilities ?? {};
    return sessionCapabilities.fork != null;
  }

  get canClose(): boolean {
    return this.capabilities.sessionCapabilities?.close != null;
  }

  get supportsHttpMcp(): boolean {
    return this.capabilities.mcpCapabilities?.http === true;
  }

  /** The end of what the agent wrote to stderr, for error messages and the journal. */
  stderrTail(): string {
    return this.stderr.quotedTail();
  }

  onExit(listener: (status: ExitStatus) => void): () => void {
    return this.exitListeners.add(listener);
  }

  authenticate(params: AuthenticateRequest, signal?: AbortSignal): Promise<unknown> {
    return this.connection.agent.request(
      methods.agent.authenticate,
      params,
      signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined,
    );
  }

  /** The agent's whole answer, as it came (modes, models, config options, `_meta`). */
  async newSession(params: NewSessionRequest): Promise<NewSessionResponse> {
    const response = await this.opening(methods.agent.session.new, this.connection.agent.request(methods.agent.session.new, params));
    this.agentSessionId = response.sessionId;
    return response;
  }

  /**
   * Loads the agent's conversation; the history it replays is not journaled again, unless `history` is `new`: a
   * conversation Berth imports from the agent (its history is not in the journal yet).
   */
  async loadSession(params: LoadSessionRequest, history: "known" | "new" = "known"): Promise<LoadSessionResponse> {
    this.replaying = history === "known";
    let response: LoadSessionResponse;
    try {
      response = await this.opening(methods.agent.session.load, this.connection.agent.request(methods.agent.session.load, params));
    } finally {
      this.replaying = false;
    }
    this.agentSessionId = params.sessionId;
    return response ?? {};
  }

  /**
   * The agent's fork of a conversation (`session/fork`, passed on as `request` does). The history an agent replays for
   * its fork (opencode does) is the original's, in its journal already: dropped as a load's, never journaled again.
   */
  async forkSession(params: { sessionId: string }, signal?: AbortSignal): Promise<{ sessionId: string }> {
    this.replaying = true;
    try {
      return (await this.request(unstableMethods.agent.session.fork, params, signal)) as { sessionId: string };
    } finally {
      this.replaying = false;
    }
  }

  async resumeSession(params: ResumeSessionRequest): Promise<ResumeSessionResponse> {
    const response = await this.opening(methods.agent.session.resume, this.connection.agent.request(methods.agent.session.resume, params));
    this.agentSessionId = params.sessionId;
    return response ?? {};
  }

  /**
   * The agent's answer to opening its session, bounded by `initializeTimeout` as its `initialize` is: an agent that
   * never answers fails its start (and is stopped) rather than holding the session's acquisition, its deletion, the
   * location's eviction and the host's shutdown forever.
   */
  private async opening<T>(method: string, answer: Promise<T>): Promise<T> {
    const { agentId, initializeTimeoutMs } = this.options;
    try {
      return await withTimeout(answer, initializeTimeoutMs);
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      throw new AgentStartError(`agent "${agentId}" did not answer ${method} within ${initializeTimeoutMs} ms${this.stderrSuffix()}`);
    }
  }

  /**
   * `prompter`: the files of the client sending it, handed with each `fs/*` request the agent sends while it works on
   * this prompt (the handlers' `prompter`).
   */
  prompt(params: Omit<PromptRequest, "sessionId">, prompter?: ClientFiles): Promise<PromptResponse> {
    const request = { ...params, sessionId: this.requireSession() };
    if (prompter) this.prompters.set(request, prompter);
    const answer = this.connection.agent.request(methods.agent.session.prompt, request);
    // An answer that never crosses the wire (its line refused, the connection gone) must not keep the prompt in flight.
    const settled = () => {
      const id = this.promptIds.get(request);
      if (id !== undefined) this.prompts.settled(id);
    };
    answer.then(settled, settled);
    return this.explainLoss(answer);
  }

  /**
   * Any other request, passed on as it came: a `sessionId` naming the Berth session becomes the
   * agent's own. The answer and any error (code, message, data) come back unchanged, but for an
   * error's `data.sessionId` naming the agent's own session (see {@link explainLoss}).
   */
  request(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    // A client that gave up stops waiting at once: the agent is told (`$/cancel_request`), nothing stays held for it.
    return this.explainLoss(
      this.connection.agent.request<unknown>(
        method,
        this.ownIds(params),
        signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined,
      ),
    );
  }

  /**
   * A request the end of the connection cut short fails saying why the agent went (stopped by
   * Berth, or its exit and last stderr lines), not with the SDK's bare "ACP connection closed",
   * which a client would take for its own connection. The agent's own errors pass unchanged, but for a
   * `data.sessionId` naming the agent's own session: the client knows the session by Berth's id only.
   */
  private async explainLoss<T>(request: Promise<T>): Promise<T> {
    try {
      return await request;
    } catch (error) {
      if (error instanceof RequestError) throw this.withBerthId(error);
      if (!this.connectionClosed) throw error;
      const exit = this.stopping ? undefined : await withTimeout(this.group.exited, EXIT_AFTER_BROKEN_CONNECTION_MS).catch(() => undefined);
      if (this.stopping) throw new AgentGoneError(`the agent was stopped by Berth${this.stoppedBecause ? ` (${this.stoppedBecause})` : ""}`);
      if (!exit) throw error;
      await this.stderrEnded(STDERR_DRAIN_MS);
      throw new AgentGoneError(`the agent exited (${describeExit(exit)})${this.stderrSuffix()}`);
    }
  }

  /** Any other notification, passed on as it came (ids as for {@link request}). */
  async notify(method: string, params: unknown): Promise<void> {
    if (this.state !== "ready") return;
    await this.connection.agent.notify(method, this.ownIds(params)).catch(() => undefined);
  }

  private withBerthId(error: RequestError): RequestError {
    const { data } = error;
    if (!isObject(data) || this.agentSessionId === undefined || data.sessionId !== this.agentSessionId) return error;
    return new RequestError(error.code, error.message, { ...data, sessionId: this.options.sessionId });
  }

  private ownIds(params: unknown): unknown {
    if (!isObject(params) || params.sessionId !== this.options.sessionId || !this.agentSessionId) return params;
    return { ...params, sessionId: this.agentSessionId };
  }

  async cancel(): Promise<void> {
    if (this.state !== "ready" || !this.agentSessionId) return;
    await this.connection.agent.notify(methods.agent.session.cancel, { sessionId: this.agentSessionId }).catch(() => undefined);
  }

  /** `session/close` when the agent supports it, then the whole process group; exactly once. `why` names the reason in errors. */
  stop(why?: string): Promise<void> {
    this.stoppedBecause ??= why;
    this.stopping ??= this.runStop();
    return this.stopping;
  }

  private async runStop(): Promise<void> {
    const wasReady = this.state === "ready";
    if (this.state === "starting" || this.state === "ready") this.state = "stopping";
    if (wasReady && this.canClose && this.agentSessionId) {
      const closing = this.connection.agent.request(methods.agent.session.close, { sessionId: this.agentSessionId });
      await withTimeout(closing, CLOSE_REQUEST_TIMEOUT_MS).catch(() => undefined);
    }
    this.connection.close();
    await this.group.stop();
    if (this.state === "stopping") this.state = "stopped";
  }

  private async initialize(): Promise<void> {
    const { agentId, initializeTimeoutMs } = this.options;
    const initializing = this.connection.agent
      .request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: berthClientCapabilities,
        clientInfo: this.options.clientInfo ?? berthClientInfo,
        ...(this.options.initializeMeta ? { _meta: this.options.initializeMeta } : {}),
      })
      .then(async (response) => {
        if (this.options.authenticate) await this.authenticate(this.options.authenticate);
        return response;
      });
    const died = this.group.exited.then((status) => {
      throw new ExitedDuringInitialize(status);
    });
    try {
      this.initializeResponse = await withTimeout(Promise.race([initializing, died]), initializeTimeoutMs);
      this.state = "ready";
    } catch (error) {
      // An agent that dies at once usually fails Berth's first write (EPIPE) or closes the
      // connection before its exit is seen: its exit and its last stderr lines say why, so
      // they are waited for (briefly) and reported instead of the broken pipe.
      const brokenConnection = !(
        error instanceof ExitedDuringInitialize ||
        error instanceof TimeoutError ||
        error instanceof RequestError ||
        error instanceof AgentStartError
      );
      const exit =
        error instanceof ExitedDuringInitialize
          ? error.status
          : brokenConnection
            ? await withTimeout(this.group.exited, EXIT_AFTER_BROKEN_CONNECTION_MS).catch(() => undefined)
            : undefined;
      await this.stop();
      await this.stderrEnded(STDERR_DRAIN_MS);
      if (error instanceof TimeoutError) {
        throw new AgentStartError(`agent "${agentId}" did not answer initialize within ${initializeTimeoutMs} ms${this.stderrSuffix()}`);
      }
      if (exit) throw new AgentStartError(`agent "${agentId}" exited during initialize (${describeExit(exit)})${this.stderrSuffix()}`);
      // The agent's own refusal (an expired login: -32000) reaches the client with its code and data.
      if (error instanceof AgentStartError || error instanceof RequestError) throw error;
      throw new AgentStartError(
        `agent "${agentId}" failed to initialize: ${error instanceof Error ? error.message : String(error)}${this.stderrSuffix()}`,
      );
    }
  }

  /** Resolves once everything the agent wrote to stderr has been read (its pipe closed), or after `boundMs`. */
  private stderrEnded(boundMs: number): Promise<void> {
    const stderr = this.group.child.stderr!;
    if (stderr.destroyed || stderr.readableEnded) return Promise.resolve();
    return withTimeout(new Promise<void>((resolve) => stderr.once("close", () => resolve())), boundMs).catch(() => undefined);
  }

  private stderrSuffix(): string {
    const tail = this.stderrTail();
    return tail ? `; stderr: ${tail}` : "";
  }

  private requireSession(): string {
    if (!this.agentSessionId) throw new Error(`agent "${this.options.agentId}" has no session yet`);
    return this.agentSessionId;
  }
}

/** The agent's requests that belong to the prompt it works on: they go to its sender's files. */
const FILE_METHODS: ReadonlySet<string> = new Set([methods.client.fs.readTextFile, methods.client.fs.writeTextFile]);

/** `writable`, with each message shown to `observe` just before it is written. */
function observedWrites(writable: WritableStream<AnyMessage>, observe: (message: AnyMessage) => void): WritableStream<AnyMessage> {
  const writer = writable.getWriter();
  return new WritableStream<AnyMessage>({
    write: (message) => {
      observe(message);
      return writer.write(message);
    },
    close: () => writer.close(),
    abort: (reason: unknown) => writer.abort(reason),
  });
}

/** `prompterOf`: the files of the prompt an agent's `fs/*` request (by its id) belongs to. */
function berthClient(handlers: AgentClientHandlers, prompterOf: (id: RequestId) => ClientFiles | undefined) {
  return (
    client({ name: "berth" })
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) => handlers.requestPermission(params, signal))
      .onRequest(methods.client.elicitation.create, ({ params, signal }) => handlers.createElicitation(params, signal))
      .onRequest(methods.client.fs.readTextFile, ({ params, requestId }) => handlers.readTextFile(params, prompterOf(requestId)))
      .onRequest(methods.client.fs.writeTextFile, ({ params, requestId }) => handlers.writeTextFile(params, prompterOf(requestId)))
      .onRequest(methods.client.terminal.create, ({ params }) => handlers.createTerminal(params))
      .onRequest(methods.client.terminal.output, ({ params }) => handlers.terminalOutput(params))
      .onRequest(methods.client.terminal.waitForExit, ({ params }) => handlers.waitForTerminalExit(params))
      .onRequest(methods.client.terminal.kill, ({ params }) => handlers.killTerminal(params))
      .onRequest(methods.client.terminal.release, ({ params }) => handlers.releaseTerminal(params))
      // Everything else (extension methods, notifications Berth does not act on) goes to the session's clients.
      .onRequest("*", ({ method, params, signal }) => handlers.relayRequest(method, params, signal))
      .onNotification("*", ({ method, params }) => handlers.relayNotification(method, params))
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function forwardStderr(group: SpawnedGroup, tail: TerminalOutput, onLine?: (line: string) => void): void {
  let partial = "";
  group.child.stderr!.on("data", (chunk: Buffer) => {
    tail.append(chunk);
    if (!onLine) return;
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    // Bound a single runaway line as well.
    if (partial.length > STDERR_TAIL_BYTES) partial = partial.slice(-STDERR_TAIL_BYTES);
    for (const line of lines) if (line.trim()) onLine(line);
  });
}

class TimeoutError extends Error {}

/** A request failed because the agent's process went away under it. */
class AgentGoneError extends Error {
  override readonly name = "AgentGoneError";
}

/** The agent's process exited before it answered `initialize`. */
class ExitedDuringInitialize extends Error {
  constructor(readonly status: ExitStatus) {
    super("the agent exited during initialize");
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError()), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
