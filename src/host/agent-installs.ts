import { randomUUID } from "node:crypto";
import { checkInstall, installAgent, type InstallMode, removeAgent } from "../agents/agent-install.js";
import type { DistributionKind } from "../agents/catalogue.js";
import type { InstalledAgent } from "../agents/installed-agents.js";
import type { Config } from "../config/config-schema.js";
import { readAgentCatalogue } from "./agent-catalogue.js";
import type { Logger } from "./logger.js";

/** What a follower of an install is told: each progress line, then its end. */
export type InstallEvent =
  | { readonly kind: "progress"; readonly line: string }
  | { readonly kind: "done"; readonly version: string; readonly command: string }
  | { readonly kind: "failed"; readonly reason: string };

export interface InstallStart {
  readonly id: string;
  readonly mode?: InstallMode;
  readonly version?: string;
  readonly distribution?: DistributionKind;
}

/** The install no longer known (finished ones are kept for a while only). */
export class InstallNotFoundError extends Error {
  override readonly name = "InstallNotFoundError";
}

/** Another install of the agent runs: one at a time per agent. */
export class InstallRunningError extends Error {
  override readonly name = "InstallRunningError";
}

interface InstallJob {
  readonly id: string;
  readonly agent: string;
  /** Every event so far: a follower that comes late is told them first. */
  readonly told: InstallEvent[];
  /** `running` until the end event is told. */
  state: "running" | "ended";
  readonly followers: Set<(event: InstallEvent) => void>;
}

/** Finished installs kept for a late follower. */
const KEPT_FINISHED = 20;

/**
 * The host's agent installs: one at a time per agent, each told to its followers as it goes. A finished install
 * updates the host's agents at once (`installed`).
 */
export class AgentInstalls {
  private readonly jobs = new Map<string, InstallJob>();
  private readonly aborts = new AbortController();
  /** Installs still running, settled once each has ended and removed what it built if it failed. */
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly config: Config,
    private readonly dataDir: string,
    private readonly installed: () => void,
    private readonly log: Logger,
  ) {}

  /** Checks the request against the registry and the installed agents (refusals are thrown), then starts it. */
  async start(request: InstallStart): Promise<{ id: string }> {
    const catalogue = await readAgentCatalogue(this.config);
    const install = { dataDir: this.dataDir, catalogue, mode: request.mode ?? "add", ...request };
    checkInstall(install);
    this.assertIdle(request.id);
    const job: InstallJob = { id: randomUUID(), agent: request.id, told: [], state: "running", followers: new Set() };
    this.jobs.set(job.id, job);
    this.forgetOldJobs();
    this.log.info({ agent: request.id, install: job.id }, "agent install started");
    const running = installAgent({ ...install, progress: (line) => this.tell(job, { kind: "progress", line }), signal: this.aborts.signal })
      .then((agent) => this.finish(job, agent))
      // A throw while taking the new agent in (re-reading the list) ends the install too, never leaving it running.
      .catch((error: unknown) => {
        this.log.warn({ agent: job.agent, install: job.id, reason: (error as Error).message }, "agent install failed");
        this.tell(job, { kind: "failed", reason: (error as Error).message });
      })
      .finally(() => this.running.delete(running));
    this.running.add(running);
    return { id: job.id };
  }

  /** The install's events so far, then each as it comes until its end; returns how to stop following. */
  follow(installId: string, follower: (event: InstallEvent) => void): () => void {
    const job = this.jobs.get(installId);
    if (!job) throw new InstallNotFoundError(`no install "${installId}" (finished installs are kept for a while only)`);
    for (const event of job.told) follower(event);
    if (job.state === "ended") return () => {};
    job.followers.add(follower);
    return () => job.followers.delete(follower);
  }

  /** Removes an installed agent; sessions whose agent runs keep their process, and its files, until the next start. */
  remove(agentId: string): void {
    this.assertIdle(agentId);
    removeAgent(this.dataDir, agentId, "at next start");
    this.installed();
    this.log.info({ agent: agentId }, "agent removed");
  }

  /** Stops running installs (each step's process group) and waits until each has removed what it built. */
  async close(): Promise<void> {
    this.aborts.abort();
    await Promise.allSettled([...this.running]);
  }

  private assertIdle(agentId: string): void {
    if ([...this.jobs.values()].some((job) => job.agent === agentId && job.state === "running"))
      throw new InstallRunningError(`agent "${agentId}" is being installed; try again once that install ends`);
  }

  private finish(job: InstallJob, agent: InstalledAgent): void {
    this.installed();
    this.log.info({ agent: job.agent, install: job.id, version: agent.version }, "agent installed");
    this.tell(job, { kind: "done", version: agent.version, command: agent.command });
  }

  private tell(job: InstallJob, event: InstallEvent): void {
    job.told.push(event);
    if (event.kind !== "progress") job.state = "ended";
    for (const follower of job.followers) follower(event);
    if (job.state === "ended") job.followers.clear();
  }

  private forgetOldJobs(): void {
    const finished = [...this.jobs.values()].filter((job) => job.state === "ended");
    for (const job of finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED))) this.jobs.delete(job.id);
  }
}
