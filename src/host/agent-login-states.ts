import type { AgentLogins } from "./agent-logins.js";
import type { AgentLoginStatus } from "./views.js";

/** ACP's "authentication required". */
const AUTH_REQUIRED = -32000;

/** Each agent's login state, from the logins Berth keeps and the agent's last answers. */
export class AgentLoginStates {
  /** Agents whose last `session/new` or prompt was refused with auth required. */
  private readonly refused = new Set<string>();

  constructor(private readonly logins: AgentLogins) {}

  of(agentId: string): AgentLoginStatus {
    if (this.refused.has(agentId)) return "needs-login";
    return this.logins.get(agentId) ? "logged-in" : "unknown";
  }

  /** The agent's answer to a `session/new` or a prompt: a refusal for want of a login, or any other outcome. */
  async observe<T>(agentId: string, answer: Promise<T>): Promise<T> {
    try {
      const value = await answer;
      this.refused.delete(agentId);
      return value;
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === AUTH_REQUIRED) this.refused.add(agentId);
      throw error;
    }
  }

  /** A login was accepted or dropped: what the agent said before says nothing any more. */
  changed(agentId: string): void {
    this.refused.delete(agentId);
  }
}
