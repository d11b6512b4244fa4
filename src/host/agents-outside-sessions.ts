import {
  methods,
  type AuthenticateRequest,
  type Implementation,
  type InitializeResponse,
  type ListSessionsRequest,
  type LogoutRequest,
} from "@agentclientprotocol/sdk";
import type { AgentChild } from "../agents/agent-child.js";
import type { AgentRegistry } from "../agents/agent-registry.js";
import { terminalLoginOf, type TerminalLogin } from "../protocol/terminal-logins.js";
import { NoTerminalLoginError } from "../logins/login-command.js";
import type { AgentLoginStates } from "./agent-login-states.js";
import { loginOf, type AgentLogins } from "./agent-logins.js";
import type { AgentProfiles } from "./agent-profiles.js";
import type { BrowserCapture } from "./browser-capture.js";
import type { TransientChildren } from "./transient-child.js";
import type { AgentLoginStatus } from "./views.js";

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
      readonly states: AgentLoginStates;
      /** The session's child, if it has one. */
      readonly childOf: (sessionId: string) => AgentChild | undefined;
      /** Every session's running child. */
      readonly liveChildren: () => readonly AgentChild[];
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
    this.deps.states.changed(agentId);
    return result;
  }

  /**
   * `logout` to every running child of the agent, or to a child started for it (as logged in as
   * the others) when none runs; once one of them accepted it, the login Berth kept is forgotten
   * and no later child gets it. An agent that refuses stays logged in, its error unchanged.
   */
  async logout(agentId: string, request: LogoutRequest, asker: Asker): Promise<unknown> {
    this.deps.registry.resolve(agentId);
    const running = this.deps.liveChildren().filter((child) => child.state === "ready" && child.agentId === agentId);
    const answers =
      running.length > 0
        ? await Promise.allSettled(running.map((child) => child.request(methods.agent.logout, request, asker.signal)))
        : await Promise.allSettled([
            this.deps.transient.run(agentId, (child) => child.request(methods.agent.logout, request, asker.signal), {
              ...asker,
              purpose: "request",
              method: methods.agent.logout,
              login: this.deps.logins.get(agentId),
              replayLogin: true,
            }),
          ]);
    const accepted = answers.find((answer) => answer.status === "fulfilled");
    if (!accepted) throw (answers[0] as PromiseRejectedResult).reason;
    this.deps.logins.delete(agentId);
    this.deps.states.changed(agentId);
    return accepted.value;
  }

  /** Whether clients must log in to the agent (see {@link AgentLoginStatus}). */
  loginState(agentId: string): AgentLoginStatus {
    this.deps.registry.resolve(agentId);
    return this.deps.states.of(agentId);
  }

  /**
   * The agent's own command for its terminal login `methodId` (run on the host), or a {@link NoTerminalLoginError}
   * naming the terminal logins the agent offers.
   */
  async terminalLoginCommand(agentId: string, methodId: string): Promise<TerminalLogin> {
    const launch = this.deps.registry.resolve(agentId);
    const methods = (await this.profile(agentId)).authMethods ?? [];
    const login = terminalLoginOf(launch, methods, methodId);
    if (login) return login;
    const offered = methods.flatMap((m) => {
      const id = (m as { id?: unknown }).id;
      return typeof id === "string" && terminalLoginOf(launch, methods, id) ? [id] : [];
    });
    throw new NoTerminalLoginError(agentId, methodId, offered);
  }

  /** An extension request with no session. */
  ask(agentId: string, method: string, params: unknown, asker: Asker, nearSessions: readonly string[]): Promise<unknown> {
    return this.askThrough(this.runningChildOf(agentId, nearSessions), agentId, method, params, asker);
  }

  /** The agent's own `session/list`: asked of any running child of it, else of a child started for it. */
  listSessions(agentId: string, request: ListSessionsRequest, asker: Asker): Promise<unknown> {
    this.deps.registry.resolve(agentId);
    const running = this.deps.liveChildren().find((child) => child.state === "ready" && child.agentId === agentId);
    return this.askThrough(running, agentId, methods.agent.session.list, request, asker);
  }

  /** `child` answers when there is one; otherwise a child started for this one request, as logged in as the others. */
  private askThrough(child: AgentChild | undefined, agentId: string, method: string, params: unknown, asker: Asker): Promise<unknown> {
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
