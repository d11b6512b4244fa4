import type { Implementation, McpServer, NewSessionRequest } from "@agentclientprotocol/sdk";
import type { SandboxPolicy } from "../sandbox/policy.js";
import type { Json } from "../store/index.js";

/** What a client's `session/load` or `session/resume` asks of the agent, besides the session. */
export interface ReopenRequest {
  readonly mcpServers?: McpServer[];
  readonly additionalDirectories?: string[];
  readonly _meta?: Record<string, unknown> | null;
}

/**
 * What the clients of a session asked of its agent, kept with the session so every child of it —
 * after a stop, a crash, a restart — is started and opened as the client asked.
 */
export interface AgentRequest {
  /** The creating client's `clientInfo` and `initialize` `_meta`. */
  readonly clientInfo?: Implementation | null;
  readonly initializeMeta?: Record<string, unknown> | null;
  /** The client's `session/new`, less `cwd` (the session's) and Berth's own `_meta` keys. */
  readonly newSession?: Omit<NewSessionRequest, "cwd">;
  /** The latest `session/load`/`session/resume`: a child that reopens the session gets its MCP servers and `_meta`. */
  readonly reopen?: ReopenRequest;
  /** The session's sandbox, decided at its creation (docs/sandbox.md): every child of it starts in the same one. */
  readonly sandbox?: SandboxPolicy;
  /**
   * The agent's own conversation Berth imported (`session/load` of a session the agent listed): `unjournaled` until a
   * child loaded it, journaling the history it replayed; then gone.
   */
  readonly nativeHistory?: "unjournaled";
}

export function agentRequestOf(stored: Json | null): AgentRequest {
  return typeof stored === "object" && stored !== null && !Array.isArray(stored) ? (stored as unknown as AgentRequest) : {};
}

/** The client's MCP servers first, then the location's services not named the same. */
export function mergedMcpServers(own: readonly McpServer[] | undefined, located: readonly McpServer[]): McpServer[] {
  const names = new Set((own ?? []).map((server) => server.name));
  return [...(own ?? []), ...located.filter((server) => !names.has(server.name))];
}

/** What `session/load`/`session/resume` of a new child carries: the latest reopening client's request, else the creating one's. */
export function reopenRequest(request: AgentRequest): ReopenRequest {
  if (request.reopen) return request.reopen;
  const { mcpServers, additionalDirectories } = request.newSession ?? {};
  return { mcpServers, additionalDirectories };
}

/** The fields of a reopen request as the agent gets them (empty ones left out, as a client would). */
export function reopenFields(reopen: ReopenRequest): { additionalDirectories?: string[]; _meta?: Record<string, unknown> } {
  return {
    ...(reopen.additionalDirectories && reopen.additionalDirectories.length > 0 ? { additionalDirectories: reopen.additionalDirectories } : {}),
    ...(reopen._meta ? { _meta: reopen._meta } : {}),
  };
}
