import type { AgentCommand } from "../agents/agent-child.js";

/**
 * What runs an agent's terminal login `methodId` (from its profile: a `type: "terminal"` auth method is the agent's own
 * launch with the method's args and env; a `_meta["terminal-auth"]` names its command). Rejects with
 * {@link NoTerminalLoginError} when the agent has no such terminal method, or the host's `UnknownAgentError`.
 */
export type LoginCommandResolver = (agentId: string, methodId: string) => Promise<AgentCommand>;

/** The host is shutting down: it starts no more logins. */
export class LoginsClosedError extends Error {
  override readonly name = "LoginsClosedError";
  constructor() {
    super("the host is shutting down: it starts no terminal login");
  }
}

/** The agent offers no terminal login by that method id. */
export class NoTerminalLoginError extends Error {
  override readonly name = "NoTerminalLoginError";
  constructor(agentId: string, methodId: string, offered: readonly string[]) {
    super(
      `agent ${JSON.stringify(agentId)} has no terminal login method ${JSON.stringify(methodId)} (${offered.length > 0 ? `its terminal methods: ${offered.join(", ")}` : "it offers none"})`,
    );
  }
}
