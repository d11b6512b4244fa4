import { randomUUID } from "node:crypto";
import { RequestError } from "@agentclientprotocol/sdk";
import { AgentChild } from "../agents/agent-child.js";
import type { AgentClientHandlers } from "../agents/agent-client-handlers.js";
import type { AgentRegistry } from "../agents/agent-registry.js";
import type { ProcessGroupLedger } from "../processes/index.js";
import { withLoginEnv, type Login } from "./agent-logins.js";
import type { HostRecord } from "./host-records.js";
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
}

/**
 * Starts a child of `agentId` for one piece of work outside any session — its `initialize`
 * answer, an `authenticate`, an extension method with no session — and stops it as a group after.
 */
export async function withTransientChild<T>(
  deps: TransientChildDeps,
  agentId: string,
  work: (child: AgentChild) => Promise<T>,
  { purpose, method, login, replayLogin }: TransientPurpose,
): Promise<T> {
  const child = await AgentChild.start({
    agentId,
    sessionId: `transient:${randomUUID()}`,
    command: withLoginEnv(deps.registry.resolve(agentId), login),
    cwd: deps.cwd,
    handlers: noSessionHandlers,
    initializeTimeoutMs: deps.initializeTimeoutMs,
    stopTimeoutMs: deps.stopTimeoutMs,
    ledger: deps.ledger,
    onStderrLine: (line) => deps.log.info({ agent: agentId, stderr: line }, "agent stderr"),
    authenticate: replayLogin ? login?.request : undefined,
  });
  try {
    deps.record({ kind: "agent_asked", agent: agentId, pid: child.pid, purpose, method });
    deps.initialized(agentId, child);
    return await work(child);
  } finally {
    await child.stop();
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
