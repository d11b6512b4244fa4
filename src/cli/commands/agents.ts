import { SseReader } from "../../protocol/sse-events.js";
import type { Command } from "commander";
import {
  type AgentDetails,
  agentRegistryOf,
  agentsOfDataDir,
  CatalogueError,
  type CatalogueView,
  catalogueView,
  type DistributionKind,
  installAgent,
  InstallError,
  InstalledListError,
  type InstallMode,
  readAgentCatalogue,
  removeAgent,
} from "../../host/agent-catalogue.js";
import { CommandFailedError, UsageError } from "../exit-codes.js";
import { formatTable } from "../format-table.js";
import { callHost, type HostFlags, HostClientError, hostUrl, localSetup, locateHost, runClientCommand, withHostFlags } from "../host-client.js";

interface Listing {
  readonly agents: readonly AgentDetails[];
  readonly registry: string;
  readonly catalogue: CatalogueView["agents"] | { readonly error: string };
}

const DISTRIBUTIONS: readonly DistributionKind[] = ["npx", "binary", "uvx"];

/**
 * `berth agents` and its commands go through the running host's REST API when a host runs on the data directory (or
 * `--url` names one), so that the host uses an install at once and no two writers touch the installs; with no host
 * running they work on the data directory itself, and the next host started reads what they did.
 */
export function register(program: Command): void {
  const agents = program
    .command("agents")
    .description("list the agents (configured, installed, and in the agent registry); add, upgrade or remove installed ones");
  // The listing is `berth agents` alone too; the flags are each subcommand's own, so they may follow it.
  withHostFlags(agents.command("list", { isDefault: true }).description("list the configured, installed and registry agents"))
    .option("--json", "print JSON")
    .action((flags: HostFlags & { json?: boolean }) =>
      runClientCommand("agents", async () => {
        const listing = await refusedAsFailure(() => list(flags));
        process.stdout.write(`${flags.json ? JSON.stringify(listing, null, 2) : agentRows(listing)}\n`);
      }),
    );
  withHostFlags(
    agents
      .command("add")
      .description("install an agent from the agent registry into the data directory")
      .argument("<agent>", "the agent's id in the registry, optionally with its version: id@version"),
  )
    .option("--from <distribution>", "which of the registry's distributions: npx, binary or uvx (default: npx, else binary, else uvx)")
    .action((spec: string, flags: HostFlags & { from?: string }) => runClientCommand("agents add", () => install(flags, spec, "add", flags.from)));
  withHostFlags(agents.command("upgrade").description("install the registry's version of an installed agent").argument("<agent>", "the agent's id"))
    .option("--from <distribution>", "which of the registry's distributions: npx, binary or uvx")
    .action((id: string, flags: HostFlags & { from?: string }) =>
      runClientCommand("agents upgrade", () => install(flags, id, "upgrade", flags.from)),
    );
  withHostFlags(agents.command("remove").description("remove an installed agent and its files").argument("<agent>", "the agent's id")).action(
    (id: string, flags: HostFlags) =>
      runClientCommand("agents remove", async () => {
        const { dataDir } = localSetup(flags);
        if (hostUrl(flags, dataDir)) await callHost(flags, `/api/agents/${encodeURIComponent(id)}`, { method: "DELETE" });
        else await refusedAsFailure(() => removeAgent(dataDir, id, "now"));
        process.stdout.write(`removed ${id}\n`);
      }),
  );
}

async function list(flags: HostFlags): Promise<Listing> {
  const { config, dataDir } = localSetup(flags);
  const unreadable = (error: Error) => ({ registry: agentRegistryOf(config), agents: { error: error.message } });
  if (hostUrl(flags, dataDir)) {
    const [{ details }, catalogue] = await Promise.all([
      callHost<{ details: AgentDetails[] }>(flags, "/api/agents"),
      callHost<CatalogueView>(flags, "/api/agents/catalogue").catch(unreadable),
    ]);
    return { agents: details, registry: catalogue.registry, catalogue: catalogue.agents };
  }
  const agents = agentsOfDataDir(config, dataDir);
  try {
    const catalogue = catalogueView(await readAgentCatalogue(config), dataDir);
    return { agents, registry: catalogue.registry, catalogue: catalogue.agents };
  } catch (error) {
    if (!(error instanceof CatalogueError)) throw error;
    const { registry, agents: catalogue } = unreadable(error);
    return { agents, registry, catalogue };
  }
}

/** One row per agent usable now, then one per registry entry not installed; the registry's version beside each. */
function agentRows({ agents, catalogue }: Listing): string {
  const entries = "error" in catalogue ? [] : catalogue;
  const rows = agents.map((agent) => [
    agent.id,
    agent.origin,
    agent.version ?? "-",
    entries.find((entry) => entry.id === agent.id)?.version ?? "-",
    agent.login.replace("-", " "),
  ]);
  for (const entry of entries) if (!agents.some((agent) => agent.id === entry.id)) rows.push([entry.id, "registry", "-", entry.version, "-"]);
  const table = formatTable(["AGENT", "ORIGIN", "VERSION", "REGISTRY", "LOGIN"], rows);
  return "error" in catalogue ? `${table}\n\n${catalogue.error}` : table;
}

async function install(flags: HostFlags, spec: string, mode: InstallMode, from: string | undefined): Promise<void> {
  const at = spec.lastIndexOf("@");
  const [id, version] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, undefined];
  if (mode === "upgrade" && version !== undefined) throw new UsageError("upgrade installs the registry's version: give the id alone");
  if (from !== undefined && !DISTRIBUTIONS.includes(from as DistributionKind))
    throw new UsageError(`--from: expected npx, binary or uvx, got ${JSON.stringify(from)}`);
  const distribution = from as DistributionKind | undefined;
  const { config, dataDir } = localSetup(flags);
  if (hostUrl(flags, dataDir)) {
    const started = await callHost<{ id: string }>(flags, "/api/agents/installs", { method: "POST", body: { id, version, mode, distribution } });
    await followInstall(flags, started.id);
    return;
  }
  const catalogue = await refusedAsFailure(() => readAgentCatalogue(config));
  const agent = await refusedAsFailure(() =>
    installAgent({ dataDir, catalogue, id, mode, version, distribution, progress: (line) => process.stdout.write(`${line}\n`) }),
  );
  process.stdout.write(`${id} ${agent.version} is installed; a host started on ${dataDir} runs it\n`);
}

/** Prints the install's progress as the host streams it; its failure is this command's. */
async function followInstall(flags: HostFlags, installId: string): Promise<void> {
  const { url, token } = locateHost(flags);
  const response = await fetch(`${url}/api/agents/installs/${encodeURIComponent(installId)}/events`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (!response.ok || !response.body) throw new HostClientError(`following install ${installId} failed with HTTP ${response.status}`);
  const reader = new SseReader();
  for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
    for (const { event, data } of reader.push(chunk)) {
      const body = JSON.parse(data) as { line?: string; reason?: string; version?: string };
      if (event === "progress") process.stdout.write(`${body.line}\n`);
      if (event === "failed") throw new HostClientError(body.reason ?? "the install failed");
      if (event === "done") {
        process.stdout.write(`installed ${body.version}; the host runs it from now on\n`);
        return;
      }
    }
  }
  throw new HostClientError(`the host ended install ${installId}'s events before its end (did it stop?)`);
}

/** The registry's and the installs' refusals, reported as this command's failure (exit code 1). */
async function refusedAsFailure<T>(action: () => T | Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof CatalogueError || error instanceof InstallError || error instanceof InstalledListError)
      throw new CommandFailedError(error.message);
    throw error;
  }
}
