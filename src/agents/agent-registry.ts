import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentConfig } from "../config/config-schema.js";
import type { AgentCommand } from "./agent-child.js";
import type { InstalledAgent } from "./installed-agents.js";

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

/** Where an agent's command comes from: the bundled demo, the configuration file, or an install from an agent registry. */
type AgentOrigin = "bundled" | "config" | "installed";

/** An agent as `berth agents` and `GET /api/agents` show it. */
export interface AgentSource {
  readonly id: string;
  readonly origin: AgentOrigin;
  /** The installed version; null for the bundled demo and configured agents (their command says nothing of it). */
  readonly version: string | null;
}

/**
 * The bundled demo agent (always available as `demo`), the agents installed from a registry, and the
 * configured agents, which win over an install of the same id. Installs and removals replace the
 * installed set while the host runs: the next child of an agent starts with its new command.
 */
export class AgentRegistry {
  private readonly commands = new Map<string, AgentCommand & { readonly source: AgentSource }>();

  constructor(
    private readonly configured: Readonly<Record<string, AgentConfig>>,
    readonly defaultAgent: string,
    private readonly agentStateDir: string,
    installed: Readonly<Record<string, InstalledAgent>> = {},
  ) {
    this.setInstalled(installed);
  }

  /** The installed agents from now on (what `<dataDir>/installed-agents.json` lists). */
  setInstalled(installed: Readonly<Record<string, InstalledAgent>>): void {
    this.commands.clear();
    this.commands.set("demo", {
      command: process.execPath,
      args: [demoAgentMain, "--state-dir", join(this.agentStateDir, "demo")],
      env: {},
      source: { id: "demo", origin: "bundled", version: null },
    });
    for (const [id, agent] of Object.entries(installed))
      this.commands.set(id, {
        command: agent.command,
        args: agent.args,
        env: agent.env,
        source: { id, origin: "installed", version: agent.version },
      });
    for (const [id, agent] of Object.entries(this.configured)) this.commands.set(id, { ...agent, source: { id, origin: "config", version: null } });
  }

  ids(): string[] {
    return [...this.commands.keys()];
  }

  sources(): AgentSource[] {
    return [...this.commands.values()].map((command) => command.source);
  }

  /** The command of `agentId` (default: the default agent); throws {@link UnknownAgentError}. */
  resolve(agentId: string = this.defaultAgent): AgentCommand {
    const found = this.commands.get(agentId);
    if (!found) throw new UnknownAgentError(agentId, this.ids());
    return { command: found.command, args: found.args, env: found.env };
  }
}
