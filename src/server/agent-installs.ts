import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { checkInstall, installAgent, InstallError, type InstallMode, type InstallRefusal, removeAgent } from "../agents/agent-install.js";
import { type Catalogue, CatalogueError, type DistributionKind, readCatalogue, shippedCatalogue } from "../agents/catalogue.js";
import type { InstalledAgent } from "../agents/installed-agents.js";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { EventStreams, sseFrame } from "./event-streams.js";
import { HttpError } from "./http-io.js";

/** `running` until the install ends `done` (the agent is usable) or `failed` (nothing of it is left). */
type InstallState = { readonly name: "running" } | { readonly name: "done"; readonly agent: InstalledAgent } | { readonly name: "failed"; readonly reason: string };

interface InstallJob {
  readonly id: string;
  readonly agent: string;
  readonly lines: string[];
  state: InstallState;
  readonly streams: EventStreams;
}

/** Finished installs kept for a late reader of their events. */
const KEPT_FINISHED = 20;

export interface InstallStart {
  readonly id: string;
  readonly mode?: InstallMode;
  readonly version?: string;
  readonly distribution?: DistributionKind;
}

/**
 * The host's agent installs (`POST /api/agents/installs`): one at a time per agent, each with its progress lines
 * streamed as Server-Sent Events to whoever follows it, and its end. A finished install updates the running
 * host's agents at once.
 */
export class AgentInstalls {
  private readonly jobs = new Map<string, InstallJob>();
  private readonly aborts = new AbortController();

  constructor(
    private readonly host: Host,
    private readonly log: Logger,
  ) {}

  /** The registry the configuration names (or the shipped snapshot), read afresh: it may change while the host runs. */
  catalogue(): Promise<Catalogue> {
    return readCatalogue(this.host.config.agentRegistry ?? shippedCatalogue).catch((error: unknown) => {
      throw error instanceof CatalogueError ? new HttpError(503, "registry_unreadable", error.message) : error;
    });
  }

  /** Checks the request against the registry and the installed agents, then starts it; refusals are HTTP errors. */
  async start(request: InstallStart): Promise<{ id: string }> {
    const catalogue = await this.catalogue();
    const install = { dataDir: this.host.dataDir, catalogue, mode: request.mode ?? "add", ...request };
    try {
      checkInstall(install);
    } catch (error) {
      throw refusal(error);
    }
    if ([...this.jobs.values()].some((job) => job.agent === request.id && job.state.name === "running"))
      throw new HttpError(409, "install_running", `agent "${request.id}" is being installed already`);
    const job: InstallJob = { id: randomUUID(), agent: request.id, lines: [], state: { name: "running" }, streams: new EventStreams(15_000, 0) };
    this.jobs.set(job.id, job);
    this.forgetOldJobs();
    this.log.info({ agent: request.id, install: job.id }, "agent install started");
    const progress = (line: string) => {
      job.lines.push(line);
      job.streams.broadcast("progress", { line });
    };
    installAgent({ ...install, progress, signal: this.aborts.signal }).then(
      (agent) => this.finish(job, { name: "done", agent }),
      (error: unknown) => this.finish(job, { name: "failed", reason: (error as Error).message }),
    );
    return { id: job.id };
  }

  /** The install's lines so far, then the rest as they come, and its end; a finished install's stream closes after its end. */
  follow(installId: string, res: ServerResponse): void {
    const job = this.jobs.get(installId);
    if (!job) throw new HttpError(404, "install_not_found", `no install "${installId}" (finished installs are kept for a while only)`);
    const told = job.lines.map((line) => sseFrame("progress", { line })).join("");
    if (job.state.name === "running") {
      job.streams.attach(res, told);
      return;
    }
    job.streams.attach(res, told + endFrame(job.state));
    res.end();
  }

  /** Removes an installed agent; sessions whose agent runs keep their process until it stops. */
  remove(agentId: string): void {
    if ([...this.jobs.values()].some((job) => job.agent === agentId && job.state.name === "running"))
      throw new HttpError(409, "install_running", `agent "${agentId}" is being installed; remove it once the install ends`);
    try {
      removeAgent(this.host.dataDir, agentId);
    } catch (error) {
      throw refusal(error);
    }
    this.host.installedAgentsChanged();
    this.log.info({ agent: agentId }, "agent removed");
  }

  /** Stops running installs (their steps' process groups); each then fails and removes what it built. */
  close(): void {
    this.aborts.abort();
    for (const job of this.jobs.values()) if (job.state.name !== "running") job.streams.close();
  }

  private finish(job: InstallJob, state: Exclude<InstallState, { name: "running" }>): void {
    job.state = state;
    if (state.name === "done") {
      this.host.installedAgentsChanged();
      this.log.info({ agent: job.agent, install: job.id, version: state.agent.version }, "agent installed");
    } else this.log.warn({ agent: job.agent, install: job.id, reason: state.reason }, "agent install failed");
    job.streams.broadcast(state.name, endData(state));
    job.streams.close();
  }

  private forgetOldJobs(): void {
    const finished = [...this.jobs.values()].filter((job) => job.state.name !== "running");
    for (const job of finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED))) this.jobs.delete(job.id);
  }
}

function endData(state: Exclude<InstallState, { name: "running" }>): unknown {
  return state.name === "done" ? { version: state.agent.version, command: state.agent.command } : { reason: state.reason };
}

function endFrame(state: Exclude<InstallState, { name: "running" }>): string {
  return sseFrame(state.name, endData(state));
}

const refusals: Readonly<Record<InstallRefusal, [number, string]>> = {
  unknown_version: [404, "version_not_in_registry"],
  not_installed: [404, "agent_not_installed"],
  installed: [409, "agent_installed"],
  no_distribution: [400, "no_distribution"],
  failed: [500, "install_failed"],
};

/** What the registry or the installed agents refuse, as the HTTP error that says so. */
function refusal(error: unknown): unknown {
  if (error instanceof CatalogueError) return new HttpError(404, "agent_not_in_registry", error.message);
  if (!(error instanceof InstallError)) return error;
  const [status, code] = refusals[error.refusal];
  return new HttpError(status, code, error.message);
}
