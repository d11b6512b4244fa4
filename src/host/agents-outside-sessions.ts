import type { AuthenticateRequest, Implementation, InitializeResponse } from "@agentclientprotocol/sdk";
import type { AgentChild } from "../agents/agent-child.js";
import type { AgentRegistry } from "../agents/agent-registry.js";
import { loginOf, type AgentLogins } from "./agent-logins.js";
import type { AgentProfiles } from "./agent-profiles.js";
import type { BrowserCapture } from "./browser-capture.js";
import type { TransientChildren } from "./transient-child.js";

/** Who asks the agent something outside a session, as the agent would see them directly. */
export interface Asker {
  readonly clientInfo?: Implementation | null;
  readonly initializeMeta?: Record<string, unknown> | null;
  /** The client gave up: the agent's child is stopped. */
  readonly signal?: AbortSignal;
}

/**
 * What a client asks of an agent rather than of a session: its `initialize` answer, a login, an
 * extension method or notification with no session. A running child of that agent among the
 * asking connection's sessions answers when there is one; otherwise a child started for it.
 */
export class AgentsOutsideSessions {
  constructor(
    private readonly deps: {
      readonly registry: AgentRegistry;
      readonly profiles: AgentProfiles;
      readonly logins: AgentLogins;
      readonly transient: TransientChildren;
      /** The session's child, if it has one. */
      readonly childOf: (sessionId: string) => AgentChild | undefined;
    },
  ) {}

  /** The agent's own `initialize` answer (stored; a probe child only the first time). */
  profile(agentId: string): Promise<InitializeResponse> {
    this.deps.registry.resolve(agentId);
    return this.deps.profiles.get(agentId);
  }

  /**
   * `authenticate` in a child of its own, started with the variables the client handed over for an
   * environment-variable method; on success it is remembered and replayed to every later child.
   * `capture`: where the child's attempts to open a browser go.
   */
  async authenticate(agentId: string, request: AuthenticateRequest, asker: Asker, capture?: BrowserCapture): Promise<unknown> {
    const login = loginOf(request, (await this.profile(agentId)).authMethods);
    const result = await this.deps.transient.run(agentId, (child) => child.authenticate(login.request, asker.signal), {
      ...asker,
      purpose: "authenticate",
      method: "authenticate",
      login,
      replayLogin: false,
      capture,
    });
    this.deps.logins.remember(agentId, login);
    return result;
  }

  /** An extension request with no session. */
  ask(agentId: string, method: string, params: unknown, asker: Asker, nearSessions: readonly string[]): Promise<unknown> {
    const child = this.runningChildOf(agentId, nearSessions);
    if (child) return child.request(method, params, asker.signal);
    return this.deps.transient.run(agentId, (transient) => transient.request(method, params, asker.signal), {
      ...asker,
      purpose: "request",
      method,
      login: this.deps.logins.get(agentId),
      replayLogin: true,
    });
  }

  /** An extension notification with no session: to a running child among `nearSessions`, else dropped (false). */
  notify(agentId: string, method: string, params: unknown, nearSessions: readonly string[]): boolean {
    const child = this.runningChildOf(agentId, nearSessions);
    if (!child) return false;
    void child.notify(method, params);
    return true;
  }

  private runningChildOf(agentId: string, sessionIds: readonly string[]): AgentChild | undefined {
    for (const sessionId of [...sessionIds].reverse()) {
      const child = this.deps.childOf(sessionId);
      if (child?.state === "ready" && child.agentId === agentId) return child;
    }
    return undefined;
  }
}
