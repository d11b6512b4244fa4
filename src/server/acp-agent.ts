import {
  agent,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type AgentApp,
  type AgentContext,
  type AuthenticateResponse,
  type McpServer,
  type ClientCapabilities,
  type Implementation,
  type InitializeResponse,
  type LogoutResponse,
  type SessionInfo,
} from "@agentclientprotocol/sdk";
import { z } from "zod";
import { berthWords } from "../config/invocation.js";
import { authMethodsForClient, terminalLoginSupportOf } from "../protocol/terminal-logins.js";
import type { ClusterSecret } from "./cluster-secret.js";
import { ConnectionRouting, type NamedPlacement } from "./connection-routing.js";
import {
  AGENT_META,
  HOST_META,
  NATIVE_META,
  PLACEMENT_META,
  SANDBOX_META,
  TITLE_META,
  WORKSPACE_META,
  WORKTREE_META,
} from "../protocol/meta-keys.js";
import type { Host } from "../host/host.js";
import type { AgentRequest, ReopenRequest, WorktreeRequest } from "../host/views.js";
import { worktreeAsked, worktreeField } from "./worktree-field.js";
import { decodeCursor, encodeCursor, SESSION_PAGE, type ListCursor } from "./list-cursors.js";
import type { Logger } from "../host/logger.js";
import { berthVersion } from "../version.js";
import type { ConnectionName } from "./connection-name.js";
import { ConnectionSessions } from "./connection-sessions.js";
import { clientFilesOf } from "./client-files.js";
import type { ClientQueue } from "./session-feed.js";
import type { ClientNotify } from "./shared-frames.js";
import { AcquisitionFailedError, classifyError, ForkUnsupportedError, SessionNotFoundError } from "../host/host-errors.js";

export interface AcpAgentOptions {
  readonly host: Host;
  /** The connection's id (its `Acp-Connection-Id`), which names its holds, cleanups and log lines. */
  readonly connection: ConnectionName;
  /** The agent this connection speaks for (`/acp?agent=ID`); the host's default agent when absent. */
  readonly agentId?: string;
  readonly log: Logger;
  /** Sends a notification to this client straight to its socket (the updates' fast path). */
  readonly notify: ClientNotify;
  /** The client's queue, which paces what its session feeds send (WebSocket clients). */
  readonly queue?: ClientQueue;
  /** Told of every prompt while it runs, so a closing server can let its answer out first. */
  readonly promptStarted?: (answered: Promise<unknown>) => void;
  /** The fleet's secret: with one, requests for another host's session are relayed to it (docs/fleet.md, "Routing"). */
  readonly cluster?: ClusterSecret;
  /** The peer host that relayed this connection here: its requests are answered here, never relayed on. */
  readonly relayedBy?: string;
  /** The host's base URL as this client reached it (`http://127.0.0.1:7420`), named in the terminal logins it is shown. */
  readonly baseUrl?: string;
}

/** Still in ACP's unstable schema: the SDK's stable method table does not name it. */
const FORK = "session/fork";
const forkParams = z.looseObject({
  sessionId: z.string(),
  cwd: z.string(),
  mcpServers: z.array(z.custom<McpServer>()).optional(),
  additionalDirectories: z.array(z.string()).optional(),
  _meta: z.record(z.string(), z.unknown()).nullish(),
});

/**
 * Berth as the ACP agent of one client connection, speaking for one agent: what the agent
 * offers is passed through (its `initialize` answer, `authenticate`, modes, models, config
 * options, `_meta`, extension methods, error codes); what Berth adds is intercepted (sessions
 * that outlive processes, many clients, journal replay, questions answered elsewhere).
 */
export function createAcpAgent({
  host,
  connection,
  agentId,
  log,
  notify,
  queue,
  promptStarted,
  cluster,
  relayedBy,
  baseUrl,
}: AcpAgentOptions): AgentApp {
  const sessions = new ConnectionSessions(host, connection, log, notify, queue);
  const connectionAgent = agentId ?? host.config.defaultAgent;
  let capabilities: ClientCapabilities = {};
  let clientInfo: Implementation | null = null;
  let initializeMeta: Record<string, unknown> | null = null;
  let clientContext: AgentContext | undefined;
  const routing = new ConnectionRouting({
    host,
    cluster,
    relayedBy,
    agentId,
    log,
    notify,
    ask: (method, params, signal) => clientContext!.request(method, params, { cancellationSignal: signal }),
  });

  const requireSession = (sessionId: string) => {
    if (!host.hasSession(sessionId)) throw RequestError.sessionNotFound(sessionId);
  };
  const requireFeed = (sessionId: string) => {
    requireSession(sessionId);
    const feed = sessions.feedOf(sessionId);
    if (!feed)
      throw RequestError.invalidRequest(
        { sessionId },
        `session "${sessionId}" is not open on this connection: open it with session/load or session/resume first`,
      );
    return feed;
  };
  /**
   * A session Berth does not know that the connection's agent lists itself in `cwd` becomes a Berth session of the same
   * id (docs/api.md, "session/list"); true if it was imported now.
   */
  const importNative = async (sessionId: string, cwd: string, signal: AbortSignal): Promise<boolean> => {
    if (host.hasSession(sessionId)) return false;
    return translatedAsync(log, () => host.importNativeSession(connectionAgent, sessionId, cwd, { clientInfo, initializeMeta, signal }));
  };
  /** Opens the session for this client; a session imported for it that the agent could not load is not left behind. */
  const holdOpened = async (sessionId: string, client: AgentContext, how: { replay: boolean }, imported: boolean) => {
    try {
      await sessions.hold(sessionId, client, capabilities, how);
      // The history the agent replayed for the import is published once committed: the client gets it before the answer.
      if (imported) await sessions.delivered(sessionId);
    } catch (error) {
      if (imported) await host.deleteSession(sessionId).catch(() => undefined);
      throw toRequestError(error, log);
    }
  };
  /** The session's modes, models and options, as a `session/new`/`load`/`resume` answer carries them. */
  const answerOf = (sessionId: string) => host.sessionAnswer(sessionId);

  const app = agent({ name: "berth" });
  // The client left: its connections to other hosts close, and those hosts release what it held there.
  app.onConnect((connection) => void connection.closed.then(() => routing.close()));
  return (
    app
      .onRequest(methods.agent.initialize, async ({ params, client }) => {
        clientContext = client;
        routing.initialized(params);
        capabilities = params.clientCapabilities ?? {};
        clientInfo = params.clientInfo ?? null;
        initializeMeta = params._meta ?? null;
        try {
          const profile = await host.agentProfile(connectionAgent);
          const login = (methodId: string) => localLoginCommand(connectionAgent, methodId, baseUrl);
          const authMethods = profile.authMethods && authMethodsForClient(profile.authMethods, terminalLoginSupportOf(capabilities), login);
          return withBerthAdditions({ ...profile, ...(authMethods ? { authMethods } : {}) });
        } catch (error) {
          // A broken agent must not lock clients out of Berth: they still list and load sessions, and learn why.
          const reason = error instanceof Error ? error.message : String(error);
          connection.whenNamed((connectionId) =>
            log.warn({ agent: connectionAgent, err: error, connectionId }, "agent did not answer initialize; clients get Berth's own answer"),
          );
          return withBerthAdditions({ protocolVersion: PROTOCOL_VERSION, agentInfo: { name: connectionAgent, version: "unknown" } }, reason);
        }
      })
      .onRequest(methods.agent.authenticate, async ({ params, signal }) => {
        const answer = await translatedAsync(log, () => host.authenticate(connectionAgent, params, { clientInfo, initializeMeta, signal }));
        routing.authenticated(params);
        log.info({ agent: connectionAgent, methodId: params.methodId, connectionId: connection.id }, "client authenticated with an agent");
        return (answer ?? {}) as AuthenticateResponse;
      })
      // Every running child of the agent logs out, and Berth forgets the login it replayed to new ones.
      .onRequest(methods.agent.logout, async ({ params, signal }) => {
        const answer = await translatedAsync(log, () => host.logout(connectionAgent, params, { clientInfo, initializeMeta, signal }));
        log.info({ agent: connectionAgent, connectionId: connection.id }, "client logged out of an agent");
        return (answer ?? {}) as LogoutResponse;
      })
      .onRequest(methods.agent.session.new, async ({ params, client, signal }) => {
        const {
          [AGENT_META]: agentMeta,
          [WORKSPACE_META]: workspaceMeta,
          [PLACEMENT_META]: placementMeta,
          [HOST_META]: deprecatedPlacementMeta,
          [WORKTREE_META]: worktreeMeta,
          [SANDBOX_META]: sandbox,
          [TITLE_META]: titleMeta,
          ...meta
        } = params._meta ?? {};
        const namedAgent = optionalMeta(AGENT_META, agentMeta);
        const worktree = worktreeMetaOf(worktreeMeta);
        // A worktree's repository is the directory a fleet places the session by.
        const directory = worktree.worktree?.repository ?? params.cwd;
        const elsewhere = await routing.createElsewhere(
          placementOf(placementMeta, deprecatedPlacementMeta, log),
          namedAgent ?? agentId,
          params,
          signal,
          directory,
        );
        if (elsewhere) return elsewhere;
        const sessionAgent = namedAgent ?? connectionAgent;
        const workspace = optionalMeta(WORKSPACE_META, workspaceMeta);
        const title = optionalMeta(TITLE_META, titleMeta);
        const { cwd, _meta: _ignored, ...newSession } = params;
        const agentRequest: AgentRequest = {
          clientInfo,
          initializeMeta,
          newSession: Object.keys(meta).length > 0 ? { ...newSession, _meta: meta } : newSession,
        };
        const view = await translatedAsync(log, () =>
          host.createSession({
            cwd,
            agent: sessionAgent,
            workspace,
            agentRequest,
            sandbox,
            sandboxWhere: `_meta["${SANDBOX_META}"]`,
            ...worktree,
            ...(title ? { title } : {}),
          }),
        );
        try {
          await sessions.hold(view.id, client, capabilities, { replay: false });
        } catch (error) {
          // The client never learns this session's id: do not leave it behind.
          await host.deleteSession(view.id).catch(() => undefined);
          throw toRequestError(error, log);
        }
        log.info({ sessionId: view.id, agent: view.agent, cwd: view.cwd, connectionId: connection.id }, "client created a session");
        return { ...answerOf(view.id), sessionId: view.id };
      })
      .onRequest(methods.agent.session.load, async ({ params, client, method, signal }) => {
        const elsewhere = routing.request(params.sessionId, method, params, signal);
        if (elsewhere) return elsewhere;
        // Another host's session whose host is offline: adopted here if this host may (docs/fleet.md), else refused.
        await translatedAsync(log, () => host.adopt(params.sessionId));
        const imported = await importNative(params.sessionId, params.cwd, signal);
        requireSession(params.sessionId);
        translated(log, () => host.reopening(params.sessionId, params.cwd, reopenOf(params)));
        await holdOpened(params.sessionId, client, { replay: true }, imported);
        return answerOf(params.sessionId);
      })
      .onRequest(methods.agent.session.resume, async ({ params, client, method, signal }) => {
        const elsewhere = routing.request(params.sessionId, method, params, signal);
        if (elsewhere) return elsewhere;
        // Another host's session whose host is offline: adopted here if this host may (docs/fleet.md), else refused.
        await translatedAsync(log, () => host.adopt(params.sessionId));
        const imported = await importNative(params.sessionId, params.cwd, signal);
        requireSession(params.sessionId);
        translated(log, () => host.reopening(params.sessionId, params.cwd, reopenOf(params)));
        await holdOpened(params.sessionId, client, { replay: false }, imported);
        // A warm agent says nothing on resume: the client still learns what the agent announced before.
        sessions.feedOf(params.sessionId)?.announceState();
        return answerOf(params.sessionId);
      })
      .onRequest(methods.agent.session.list, async ({ params, signal }) => {
        const cwd = params.cwd ?? undefined;
        const cursor = params.cursor == null ? undefined : listCursorOf(params.cursor);
        // Berth's own sessions come first, a page at a time; then, on the page where they end, the agent's own.
        let own: SessionInfo[] = [];
        if (cursor === undefined || "after" in cursor) {
          const page = translated(log, () =>
            host.sessionPage({
              ...(cwd === undefined ? {} : { cwd }),
              // A connection bound to an agent lists that agent's sessions, as the agent itself would.
              ...(agentId === undefined ? {} : { agent: agentId }),
              ...(cursor ? { after: cursor.after } : {}),
              limit: SESSION_PAGE,
            }),
          );
          own = page.sessions.map((view) => ({
            sessionId: view.id,
            cwd: view.cwd,
            title: view.title,
            updatedAt: new Date(view.updatedAt).toISOString(),
            _meta: { [AGENT_META]: view.agent, [WORKSPACE_META]: view.workspace },
          }));
          if (page.next) return { sessions: own, nextCursor: encodeCursor({ after: page.next }) };
        }
        // The agent's own sessions are asked for only when the list is narrowed to an agent or a directory: never everything.
        if (agentId === undefined && cwd === undefined) return { sessions: own };
        const agentCursor = cursor && "agentCursor" in cursor ? cursor.agentCursor : undefined;
        const native = await host.nativeSessions(
          connectionAgent,
          { ...(cwd === undefined ? {} : { cwd }), ...(agentCursor === undefined ? {} : { cursor: agentCursor }) },
          { clientInfo, initializeMeta, signal },
        );
        const natives = native.sessions.map((session) => ({
          ...session,
          _meta: { ...session._meta, [AGENT_META]: connectionAgent, [NATIVE_META]: true },
        }));
        return {
          sessions: [...own, ...natives].sort((a, b) => (b.updatedAt ?? "").localeCompare(a.updatedAt ?? "")),
          ...(native.nextCursor ? { nextCursor: encodeCursor({ agentCursor: native.nextCursor }) } : {}),
        };
      })
      .onRequest(methods.agent.session.prompt, ({ params, client, method, signal }) => {
        const elsewhere = routing.request(params.sessionId, method, params, signal);
        if (elsewhere) {
          promptStarted?.(elsewhere);
          return elsewhere;
        }
        const feed = requireFeed(params.sessionId);
        const { sessionId, prompt, ...extra } = params;
        const files = clientFilesOf(capabilities, client);
        const answer = translatedAsync(log, () => feed.ownPrompt((origin) => host.prompt(sessionId, prompt, extra, { origin, files })));
        promptStarted?.(answer);
        return answer;
      })
      .onNotification(methods.agent.session.cancel, async ({ params, method }) => {
        if (routing.notify(params.sessionId, method, params)) return;
        if (!sessions.feedOf(params.sessionId))
          return log.warn({ sessionId: params.sessionId, connectionId: connection.id }, "session/cancel for a session this client has not opened");
        await host.cancel(params.sessionId);
      })
      .onRequest(methods.agent.session.close, async ({ params, method, signal }) => {
        const elsewhere = routing.request(params.sessionId, method, params, signal);
        if (elsewhere) return elsewhere;
        requireSession(params.sessionId);
        sessions.release(params.sessionId);
        return {};
      })
      // A new Berth session on the agent's fork of the conversation, with a copy of the journal (docs/api.md, `session/fork`).
      .onRequest(FORK, forkParams, async ({ params, client, method, signal }) => {
        const elsewhere = routing.request(params.sessionId, method, params, signal);
        if (elsewhere) return elsewhere;
        requireFeed(params.sessionId);
        const { sessionId, _meta, ...request } = params;
        const view = await translatedAsync(log, () => host.forkSession(sessionId, { ...request, ...(_meta ? { _meta } : {}) }, signal));
        try {
          await sessions.hold(view.id, client, capabilities, { replay: false });
        } catch (error) {
          // The client never learns the fork's id: do not leave it behind.
          await host.deleteSession(view.id).catch(() => undefined);
          throw toRequestError(error, log);
        }
        log.info({ sessionId: view.id, forkedFrom: sessionId, agent: view.agent, connectionId: connection.id }, "client forked a session");
        return { ...answerOf(view.id), sessionId: view.id };
      })
      // Berth's session is what the client knows: deleting it stops its agent (which closes its own) and deletes the journal.
      .onRequest(methods.agent.session.delete, async ({ params, method, signal }) => {
        const elsewhere = routing.request(params.sessionId, method, params, signal);
        if (elsewhere) return elsewhere;
        requireSession(params.sessionId);
        sessions.release(params.sessionId);
        await translatedAsync(log, () => host.deleteSession(params.sessionId));
        log.info({ sessionId: params.sessionId, connectionId: connection.id }, "client deleted a session");
        return {};
      })
      // Everything else is the agent's: a session's request goes to that session's agent, any other to the connection's agent.
      .onRequest("*", ({ method, params, signal }) => {
        const sessionId = sessionIdOf(params);
        if (sessionId === undefined)
          return translatedAsync(log, () =>
            host.askAgent(connectionAgent, method, params, { clientInfo, initializeMeta, signal }, sessions.openIds()),
          );
        const elsewhere = routing.request(sessionId, method, params, signal);
        if (elsewhere) return elsewhere;
        requireFeed(sessionId);
        return translatedAsync(log, () => host.forward(sessionId, method, params, { signal, requester: sessions.holderId }));
      })
      .onNotification("*", ({ method, params }) => {
        const sessionId = sessionIdOf(params);
        if (sessionId !== undefined && routing.notify(sessionId, method, params)) return;
        const passed =
          sessionId === undefined
            ? host.notifyAgentOf(connectionAgent, method, params, sessions.openIds())
            : sessions.feedOf(sessionId) !== undefined && host.notifyAgent(sessionId, method, params);
        if (!passed)
          log.warn(
            { method, sessionId, connectionId: connection.id },
            "client notification dropped: no running agent of an open session to pass it to",
          );
      })
  );
}

/** The agent's own answer with what Berth adds: sessions it can always load, list, resume and close (fork only if the agent can). */
function withBerthAdditions(profile: InitializeResponse, agentUnavailable?: string): InitializeResponse {
  const capabilities = profile.agentCapabilities ?? {};
  const sessionCapabilities = capabilities.sessionCapabilities ?? {};
  return {
    ...profile,
    agentCapabilities: {
      ...capabilities,
      loadSession: true,
      sessionCapabilities: { ...sessionCapabilities, list: {}, resume: {}, close: {}, delete: {} },
    },
    _meta: { ...profile._meta, [HOST_META]: { name: "berth", version: berthVersion, ...(agentUnavailable ? { agentUnavailable } : {}) } },
  };
}

/**
 * The command that attaches a client's terminal to the host's run of an agent's terminal login (`berth login`), as
 * Berth was started; it finds the token as `berth connect` does, so none is in it.
 */
function localLoginCommand(agentId: string, methodId: string, baseUrl: string | undefined): string[] {
  return [...berthWords(undefined, "program"), "login", "--agent", agentId, "--method", methodId, ...(baseUrl ? ["--url", baseUrl] : [])];
}

/** What a `session/load`/`session/resume` asks of the agent besides the session (kept for a cold reopen). */
function reopenOf(params: {
  mcpServers?: McpServer[] | null;
  additionalDirectories?: string[] | null;
  _meta?: Record<string, unknown> | null;
}): ReopenRequest {
  return {
    mcpServers: params.mcpServers ?? [],
    ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}),
    ...(params._meta ? { _meta: params._meta } : {}),
  };
}

function sessionIdOf(params: unknown): string | undefined {
  if (typeof params !== "object" || params === null || !("sessionId" in params)) return undefined;
  return typeof params.sessionId === "string" ? params.sessionId : undefined;
}

function optionalMeta(key: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value === "")
    throw RequestError.invalidParams({ key }, `_meta["${key}"] must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * The host `session/new` names to place the session on: `_meta["berth/placement"]`, else the deprecated
 * `_meta["berth/host"]` (its old key, read until 0.3.0; in `initialize` that key is Berth's `{ name, version }`).
 */
function placementOf(placementMeta: unknown, deprecatedMeta: unknown, log: Logger): NamedPlacement | undefined {
  const placement = optionalMeta(PLACEMENT_META, placementMeta);
  // Only a string there is a placement: an object is the key's meaning in `initialize`, copied along by a client.
  const deprecated = typeof deprecatedMeta === "string" ? optionalMeta(HOST_META, deprecatedMeta) : undefined;
  if (placement !== undefined && deprecated !== undefined && placement !== deprecated)
    throw RequestError.invalidParams(
      { key: PLACEMENT_META },
      `_meta["${PLACEMENT_META}"] names host "${placement}" and the deprecated _meta["${HOST_META}"] host "${deprecated}": name one`,
    );
  if (placement !== undefined) return { host: placement, key: PLACEMENT_META };
  if (deprecated === undefined) return undefined;
  log.warn({ host: deprecated }, `session/new named its host with the deprecated _meta["${HOST_META}"]; use _meta["${PLACEMENT_META}"]`);
  return { host: deprecated, key: HOST_META };
}

function worktreeMetaOf(value: unknown): { worktree?: WorktreeRequest } {
  if (value === undefined || value === null) return {};
  const parsed = worktreeField.safeParse(value);
  if (!parsed.success)
    throw RequestError.invalidParams(
      { key: WORKTREE_META },
      `_meta["${WORKTREE_META}"]: ${parsed.error.issues.map((issue) => `${issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""}${issue.message}`).join("; ")}`,
    );
  return worktreeAsked(parsed.data);
}

/** A `session/list` cursor, else `-32602` naming it. */
function listCursorOf(text: string): ListCursor {
  try {
    return decodeCursor(text);
  } catch (error) {
    throw RequestError.invalidParams({ cursor: text, code: "invalid_cursor" }, (error as Error).message);
  }
}

/**
 * Host errors as JSON-RPC errors, with their message and machine code; the agent's own errors unchanged.
 * An internal error is logged: the client sees only its message, the operator needs the stack.
 */
function toRequestError(error: unknown, log: Logger): RequestError {
  if (error instanceof RequestError) return error;
  // The agent could not be started because of the request itself, or the session went away meanwhile (another host took it).
  if (error instanceof AcquisitionFailedError && (error.cause instanceof RequestError || error.cause instanceof SessionNotFoundError))
    return toRequestError(error.cause, log);
  if (error instanceof SessionNotFoundError) return RequestError.sessionNotFound(error.sessionId);
  if (error instanceof ForkUnsupportedError) return RequestError.methodNotFound(FORK);
  const { class: errorClass, code, message, details } = classifyError(error);
  if (errorClass === "bad_input") return RequestError.invalidParams({ ...details, code }, message);
  if (errorClass === "conflict") return RequestError.invalidRequest({ ...details, code }, message);
  log.error({ err: error, code }, "ACP request failed");
  return RequestError.internalError({ code }, message);
}

function translated<T>(log: Logger, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw toRequestError(error, log);
  }
}

async function translatedAsync<T>(log: Logger, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toRequestError(error, log);
  }
}
