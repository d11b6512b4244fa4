import type { AgentSource } from "../agents/agent-registry.js";

/** Whether Berth holds a login the agent accepted: `logged_in`, `needs_login`, or `unknown` until the agent says. */
export type AgentLoginState = "logged_in" | "needs_login" | "unknown";

/** An agent as listed by `GET /api/agents` and `berth agents`. */
export interface AgentDetails extends AgentSource {
  readonly login: AgentLoginState;
}

/** The one place the listings read an agent's login state from: no agent's login is tracked yet, so each is `unknown`. */
export function agentLoginState(_agentId: string): AgentLoginState {
  return "unknown";
}
