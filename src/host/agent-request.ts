import type { Implementation, McpServer, NewSessionRequest } from "@agentclientprotocol/sdk";
import type { Json } from "../store/index.js";

/**
 * What the client that created a session asked of its agent, kept with the session so every
 * child of it — after a release, a crash, a restart — is started and opened the same way.
 */
export interface AgentRequest {
  /** The creating client's `clientInfo` and `initialize` `_meta`. */
  readonly clientInfo?: Implementation | null;
  readonly initializeMeta?: Record<string, unknown> | null;
  /** The client's `session/new`, less `cwd` (the session's) and Berth's own `_meta` keys. */
  readonly newSession?: Omit<NewSessionRequest, "cwd">;
}

export function agentRequestOf(stored: Json | null): AgentRequest {
  return typeof stored === "object" && stored !== null && !Array.isArray(stored) ? (stored as unknown as AgentRequest) : {};
}

/** The client's MCP servers first, then the location's services not named the same. */
export function mergedMcpServers(request: AgentRequest, located: readonly McpServer[]): McpServer[] {
  const own = request.newSession?.mcpServers ?? [];
  const names = new Set(own.map((server) => server.name));
  return [...own, ...located.filter((server) => !names.has(server.name))];
}

/** What `session/load` and `session/resume` carry again of the creating request (not its one-off `_meta`). */
export function reopenFields(request: AgentRequest): { additionalDirectories?: string[] } {
  const directories = request.newSession?.additionalDirectories;
  return directories && directories.length > 0 ? { additionalDirectories: directories } : {};
}
