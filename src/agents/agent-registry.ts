import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentConfig } from "../config/config-schema.js";
import type { AgentCommand } from "./agent-child.js";

/** Resolves from both `src/agents` and `dist/agents`: the demo agent always runs compiled. */
export const demoAgentMain = fileURLToPath(new URL("../../dist/agents/demo-agent/main.js", import.meta.url));

export class UnknownAgentError extends Error {
  override readonly name = "UnknownAgentError";
  constructor(
    readonly agentId: string,
    known: readonly string[],
  ) {
    super(`unknown agent "${agentId}" (configured agents: ${known.join(", ")})`);
  }
}

/** The configured agents plus the bundled demo agent, always available as `demo`. */
export class AgentRegistry {
  private readonly commands = new Map<string, AgentCommand>();

  constructor(
    agents: Readonly<Record<string, AgentConfig>>,
    readonly defaultAgent: string,
    agentStateDir: string,
  ) {
    this.commands.set("demo", {
      command: process.execPath,
      args: [demoAgentMain, "--state-dir", join(agentStateDir, "demo")],
      env: {},
    });
    for (const [id, agent] of Object.entries(agents)) this.commands.set(id, agent);
  }

  ids(): string[] {
    return [...this.commands.keys()];
  }

  /** The command of `agentId` (default: the default agent); throws {@link UnknownAgentError}. */
  resolve(agentId: string = this.defaultAgent): AgentCommand {
    const command = this.commands.get(agentId);
    if (!command) throw new UnknownAgentError(agentId, this.ids());
    return command;
  }
}
