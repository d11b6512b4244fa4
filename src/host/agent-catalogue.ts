import { AgentRegistry, type AgentSource } from "../agents/agent-registry.js";
import { type Catalogue, type DistributionKind, platformKey, readCatalogue, shippedCatalogue } from "../agents/catalogue.js";
import { readInstalledAgents } from "../agents/installed-agents.js";
import type { Config } from "../config/config-schema.js";
import { dataPaths } from "../config/paths.js";
import type { AgentLoginStatus } from "./views.js";

// The agent catalogue on a data directory, with or without a host running on it: what `berth agents` uses
// offline and the host's own installs use (docs/host.md, "The agent catalogue").
export { installAgent, InstallError, type InstallMode, removeAgent } from "../agents/agent-install.js";
export { CatalogueError, type DistributionKind } from "../agents/catalogue.js";
export { InstalledListError } from "../agents/installed-agents.js";

/** An agent as listed by `GET /api/agents` and `berth agents`. */
export interface AgentDetails extends AgentSource {
  /** The host's `agentLoginState`; `unknown` with no host running (the login state lives in the host). */
  readonly login: AgentLoginStatus;
}

/** A registry entry as `GET /api/agents/catalogue` and `berth agents` list it. */
interface CatalogueAgentView {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  readonly description: string | null;
  readonly distributions: readonly DistributionKind[];
  /** The version installed in the data directory; null if none. */
  readonly installed: string | null;
}

export interface CatalogueView {
  readonly registry: string;
  /** This machine's key among a binary distribution's platforms. */
  readonly platform: string;
  readonly agents: readonly CatalogueAgentView[];
}

export function withLoginStates(sources: readonly AgentSource[], loginState: (agentId: string) => AgentLoginStatus): AgentDetails[] {
  return sources.map((source) => ({ ...source, login: loginState(source.id) }));
}

/** The registry the configuration names, else the snapshot Berth ships. */
export function agentRegistryOf(config: Config): string {
  return config.agentRegistry ?? shippedCatalogue;
}

/** Reads the registry afresh (it may change while a host runs); a {@link CatalogueError} names what is wrong. */
export function readAgentCatalogue(config: Config): Promise<Catalogue> {
  return readCatalogue(agentRegistryOf(config));
}

/** The registry's entries, with the version of each installed in the data directory. */
export function catalogueView(catalogue: Catalogue, dataDir: string): CatalogueView {
  const installed = readInstalledAgents(dataDir);
  return {
    registry: catalogue.source,
    platform: platformKey(),
    agents: catalogue.agents.map((entry) => ({
      id: entry.id,
      name: entry.name,
      version: entry.version,
      description: entry.description ?? null,
      distributions: Object.keys(entry.distribution) as DistributionKind[],
      installed: installed[entry.id]?.version ?? null,
    })),
  };
}

/** The agents a host started on this data directory with this configuration would have. */
export function agentsOfDataDir(config: Config, dataDir: string): AgentDetails[] {
  const registry = new AgentRegistry(config.agents, config.defaultAgent, dataPaths(dataDir).agentState, readInstalledAgents(dataDir));
  return withLoginStates(registry.sources(), () => "unknown");
}
