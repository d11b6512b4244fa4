import { randomUUID } from "node:crypto";
import { RequestError, type Implementation } from "@agentclientprotocol/sdk";
import { AgentChild } from "../agents/agent-child.js";
import type { AgentClientHandlers } from "../agents/agent-client-handlers.js";
import type { AgentRegistry } from "../agents/agent-registry.js";
import type { ProcessGroupLedger } from "../processes/index.js";
import { withLoginEnv, type Login } from "./agent-logins.js";
import type { BrowserCapture } from "./browser-capture.js";
import type { HostRecord } from "./host-records.js";
import { KeyedSlots } from "./keyed-slots.js";
import type { Logger } from "./logger.js";

export interface TransientChildDeps {
  readonly registry: AgentRegistry;
  readonly ledger: ProcessGroupLedger;
  readonly log: Logger;
  /** Where such a child runs: no location is booted for it. */
  readonly cwd: string;
  readonly initializeTimeoutMs: number;
  readonly stopTimeoutMs: number;
  /** Every child's `initialize` answer refreshes the agent's profile. */
  readonly initialized: (agentId: string, child: AgentChild) => void;
  readonly record: (record: HostRecord) => void;
}

/** Why a child is started outside any session, and the method it is asked. */
export interface TransientPurpose {
  readonly purpose: "initialize" | "authenticate" | "request";
  readonly method: string;
  /** The login whose variables the child is started with. */
  readonly login?: Login;
  /** Send that login's `authenticate` first (not when the request is itself the login). */
  readonly replayLogin: boolean;
  /** Where an `authenticate` that opens a browser hands its address instead. */
  readonly capture?: BrowserCapture;
  /** The asking client's name and `initialize` `_meta`, as the agent would get them directly. */
  readonly clientInfo?: Implementation | null;
  readonly initializeMeta?: Record<string, unknown> | null;
  /** The client gave up (its request was cancelled, it left): the child is stopped. */
  readonly signal?: AbortSignal;
}

/**
 * How many children of one agent may answer requests of one method outside sessions at once (`session/list` to find an unknown id,
 * sessionless extensions): a burst of them, however many clients send it, starts no more processes than this.
 */
export const REQUEST_CHILDREN_PER_AGENT = 4;

/**
 * Children of agents started for one piece of work outside any session — an agent's `initialize`
 * answer, an `authenticate`, an extension method with no session — each stopped as a group once
 * its work is done, its client gives up, or the host shuts down.
 */
export class TransientChildren {
  private readonly live = new Set<AgentChild>();
  private readonly runs = new Set<Promise<unknown>>();
  private readonly requestSlots = new KeyedSlots(REQUEST_CHILDREN_PER_AGENT);
  private closed = false;

  constructor(private readonly deps: TransientChildDeps) {}

  run<T>(agentId: string, work: (child: AgentChild) => Promise<T>, purpose: TransientPurpose): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the host is shutting down"));
    const running = purpose.purpose === "request" ? this.runInSlot(agentId, work, purpose) : this.runOnce(agentId, work, purpose);
    this.runs.add(running);
    const done = () => this.runs.delete(running);
    running.then(done, done);
    return running;
  }

  /** Shutdown: no new child starts; every one running is stopped, and every run settles. */
  async stopAll(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.live].map((child) => child.stop()));
    await Promise.allSettled([...this.runs]);
  }

  /** Waits for one of the agent's request slots (or the client giving up), then runs. */
  private async runInSlot<T>(agentId: string, work: (child: AgentChild) => Promise<T>, purpose: TransientPurpose): Promise<T> {
    // A pool per method: long extension requests do not keep an agent's session/list waiting.
    const free = await this.requestSlots.take(`${agentId} ${purpose.method}`, purpose.signal);
    try {
      return await this.runOnce(agentId, work, purpose);
    } finally {
      free();
    }
  }

  private async runOnce<T>(agentId: string, work: (child: AgentChild) => Promise<T>, purpose: TransientPurpose): Promise<T> {
    const { deps } = this;
    const { login, signal } = purpose;
    // A run that waited for a slot may get it after shutdown began.
    if (this.closed) throw new Error("the host is shutting down");
    signal?.throwIfAborted();
    const command = withLoginEnv(deps.registry.resolve(agentId), login);
    const child = await AgentChild.start({
      agentId,
      sessionId: `transient:${randomUUID()}`,
      command: purpose.capture ? purpose.capture.command(command) : command,
      cwd: deps.cwd,
      handlers: noSessionHandlers,
      initializeTimeoutMs: deps.initializeTimeoutMs,
      stopTimeoutMs: deps.stopTimeoutMs,
      ledger: deps.ledger,
      onStderrLine: (line) => deps.log.info({ agent: agentId, stderr: line }, "agent stderr"),
      clientInfo: purpose.clientInfo,
      initializeMeta: purpose.initializeMeta,
      authenticate: purpose.replayLogin ? login?.request : undefined,
    });
    this.live.add(child);
    const stop = () => void child.stop();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      if (this.closed || signal?.aborted) throw new Error(this.closed ? "the host is shutting down" : "the client gave up");
      deps.record({ kind: "agent_asked", agent: agentId, pid: child.pid, purpose: purpose.purpose, method: purpose.method });
      deps.initialized(agentId, child);
      return await work(child);
    } finally {
      signal?.removeEventListener("abort", stop);
      await child.stop();
      this.live.delete(child);
    }
  }
}

function refuse(): never {
  throw RequestError.invalidRequest(undefined, "Berth started this agent process for one request outside any session; it serves no session");
}

const noSessionHandlers: AgentClientHandlers = {
  sessionUpdate: () => undefined,
  requestPermission: async () => refuse(),
  createElicitation: async () => refuse(),
  readTextFile: async () => refuse(),
  writeTextFile: async () => refuse(),
  createTerminal: async () => refuse(),
  terminalOutput: async () => refuse(),
  waitForTerminalExit: async () => refuse(),
  killTerminal: async () => refuse(),
  releaseTerminal: async () => refuse(),
  relayRequest: async (method) => {
    throw RequestError.methodNotFound(method);
  },
  relayNotification: () => undefined,
};
