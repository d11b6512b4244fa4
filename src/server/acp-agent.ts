import { agent, methods, PROTOCOL_VERSION, RequestError, type AgentApp, type ClientCapabilities } from "@agentclientprotocol/sdk";
import { SessionNotFoundError } from "../host/agent-children.js";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { berthVersion } from "../version.js";
import { ConnectionSessions } from "./connection-sessions.js";
import { classifyError } from "./host-errors.js";

export interface AcpAgentOptions {
  readonly host: Host;
  /** Names this connection's holds and cleanups. */
  readonly connectionId: string;
  /** The agent this connection speaks for (`/acp?agent=ID`); the host's default agent when absent. */
  readonly agentId?: string;
  readonly log: Logger;
  /** Sends a notification to this client straight to its socket (the updates' fast path). */
  readonly notify: (method: string, params: unknown) => void;
}

/** `_meta` keys of `session/new` that pick the agent and the workspace. */
export const AGENT_META = "berth/agent";
export const WORKSPACE_META = "berth/workspace";

/**
 * Berth as the ACP agent of one client connection: sessions are created, listed, loaded,
 * resumed, prompted, cancelled and closed on the host, which runs the real agents.
 */
export function createAcpAgent({ host, connectionId, log, notify }: AcpAgentOptions): AgentApp {
  const sessions = new ConnectionSessions(host, connectionId, log, notify);
  let capabilities: ClientCapabilities = {};

  const requireSession = (sessionId: string) => {
    if (!host.getSession(sessionId)) throw RequestError.sessionNotFound(sessionId);
  };
  const requireFeed = (sessionId: string) => {
    requireSession(sessionId);
    const feed = sessions.feedOf(sessionId);
    if (!feed) throw RequestError.invalidRequest({ sessionId }, `session "${sessionId}" is not open on this connection: open it with session/load or session/resume first`);
    return feed;
  };

  return agent({ name: "berth" })
    .onRequest(methods.agent.initialize, ({ params }) => {
      capabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentInfo: { name: "berth", title: "Berth", version: berthVersion },
        agentCapabilities: {
          loadSession: true,
          sessionCapabilities: { list: {}, resume: {}, close: {} },
          mcpCapabilities: { http: true },
        },
      };
    })
    .onRequest(methods.agent.session.new, async ({ params, client }) => {
      const meta = params._meta ?? {};
      const agentId = optionalMeta(meta, AGENT_META);
      const workspace = optionalMeta(meta, WORKSPACE_META);
      const view = translated(() => host.createSession({ cwd: params.cwd, agent: agentId, workspace }));
      try {
        await sessions.hold(view.id, client, capabilities, { replay: false });
      } catch (error) {
        // The client never learns this session's id: do not leave it behind.
        await host.deleteSession(view.id).catch(() => undefined);
        throw toRequestError(error);
      }
      log.info({ sessionId: view.id, agent: view.agent, cwd: view.cwd, connectionId }, "client created a session");
      return { sessionId: view.id };
    })
    .onRequest(methods.agent.session.load, async ({ params, client }) => {
      requireSession(params.sessionId);
      await translatedAsync(() => sessions.hold(params.sessionId, client, capabilities, { replay: true }));
      return {};
    })
    .onRequest(methods.agent.session.resume, async ({ params, client }) => {
      requireSession(params.sessionId);
      await translatedAsync(() => sessions.hold(params.sessionId, client, capabilities, { replay: false }));
      return {};
    })
    .onRequest(methods.agent.session.list, ({ params }) => {
      const cwd = params.cwd ?? undefined;
      const views = translated(() => host.listSessions(cwd === undefined ? {} : { cwd }));
      return {
        sessions: views.map((view) => ({
          sessionId: view.id,
          cwd: view.cwd,
          title: view.title,
          updatedAt: new Date(view.updatedAt).toISOString(),
          _meta: { [AGENT_META]: view.agent, [WORKSPACE_META]: view.workspace },
        })),
      };
    })
    .onRequest(methods.agent.session.prompt, ({ params }) => {
      const feed = requireFeed(params.sessionId);
      return translatedAsync(() => feed.ownPrompt(() => host.prompt(params.sessionId, params.prompt)));
    })
    .onNotification(methods.agent.session.cancel, async ({ params }) => {
      if (!sessions.feedOf(params.sessionId)) return log.warn({ sessionId: params.sessionId, connectionId }, "session/cancel for a session this client has not opened");
      await host.cancel(params.sessionId);
    })
    .onRequest(methods.agent.session.close, ({ params }) => {
      requireSession(params.sessionId);
      sessions.release(params.sessionId);
      return {};
    });
}

function optionalMeta(meta: Record<string, unknown>, key: string): string | undefined {
  const value = meta[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value === "") throw RequestError.invalidParams({ key }, `_meta["${key}"] must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

/** Host errors as JSON-RPC errors, with their message and machine code. */
export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  if (error instanceof SessionNotFoundError) return RequestError.sessionNotFound(error.sessionId);
  const { class: errorClass, code, message } = classifyError(error);
  if (errorClass === "bad_input") return RequestError.invalidParams({ code }, message);
  if (errorClass === "conflict") return RequestError.invalidRequest({ code }, message);
  return RequestError.internalError({ code }, message);
}

function translated<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw toRequestError(error);
  }
}

async function translatedAsync<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toRequestError(error);
  }
}
