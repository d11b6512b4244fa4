import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import type { McpServerHttp } from "@agentclientprotocol/sdk";
import type { ServiceConfig } from "../config/config-schema.js";
import type { ProcessGroupLedger } from "../processes/ledger.js";
import { LOOPBACK_HOST } from "./port-allocation.js";
import { assertRunnableService } from "./service-launch.js";
import { ServiceProcess, type ServiceLog, type ServiceState } from "./service-process.js";

export interface ServiceProcessesOptions {
  /** The configured services, by name. */
  readonly services: Readonly<Record<string, ServiceConfig>>;
  /** The location's directory: where every service runs. */
  readonly cwd: string;
  /** Told about each service's process group when it starts and when it is gone. */
  readonly ledger?: ProcessGroupLedger;
  readonly log?: ServiceLog;
  /** How long a service may take to leave after SIGTERM before its group is killed (default 3 s). */
  readonly stopTimeoutMs?: number;
  /** The sandbox each service starts in, if any (asked at each start; throws when it cannot run here). */
  readonly sandbox?: () => SandboxPlan | undefined;
}

/** ACP's HTTP MCP server entry, as passed to agents in `session/new` and `session/load`. */
export type HttpMcpServer = McpServerHttp & { type: "http" };

/** One service as shown to operators: `pid` and `port` once known. */
export interface ServiceInfo {
  readonly name: string;
  readonly pid: number | undefined;
  readonly port: number | undefined;
  readonly state: ServiceState;
}

/** `ensureStarted` after `stopAll`: the location was evicted and its services are gone for good. */
export class ServicesClosedError extends Error {
  constructor(directory: string) {
    super(`location services closed: the services of ${directory} were stopped and cannot start again`);
    this.name = "ServicesClosedError";
  }
}

/**
 * The configured service processes of one location, shared by its sessions.
 * `open` → `closed`: started lazily by {@link ensureStarted}; once
 * {@link stopAll} ran, nothing starts again and a start under way is called off.
 */
export class ServiceProcesses {
  private state: "open" | "closed" = "open";
  /** The latest run of each service started so far. */
  private readonly processes = new Map<string, ServiceProcess>();
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: ServiceProcessesOptions) {
    for (const [name, config] of Object.entries(options.services)) assertRunnableService(name, config);
  }

  /**
   * Starts every service that is not running (never started, failed, or exited
   * since) and waits until each is ready. Concurrent callers share one start.
   * Rejects naming each service that could not start; the others stay up.
   */
  ensureStarted(): Promise<void> {
    if (this.state === "closed") return Promise.reject(new ServicesClosedError(this.options.cwd));
    this.starting ??= this.startAll().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** An HTTP MCP server entry for every ready service that serves MCP. */
  mcpServers(): HttpMcpServer[] {
    return [...this.processes.values()].flatMap((service) => {
      const mcp = this.options.services[service.name]?.mcp;
      if (!mcp || service.state !== "ready" || service.port === undefined) return [];
      const url = `http://${LOOPBACK_HOST}:${service.port}${mcp.path}`;
      return [{ type: "http" as const, name: service.name, url, headers: [] }];
    });
  }

  /** Each service started so far (its latest run), for display. */
  list(): ServiceInfo[] {
    return [...this.processes.values()].map(({ name, pid, port, state }) => ({ name, pid, port, state }));
  }

  /** Stops every service as a group, awaiting each stop; closes for good. Idempotent. */
  stopAll(): Promise<void> {
    this.state = "closed";
    this.closing ??= this.stopEverything();
    return this.closing;
  }

  private async startAll(): Promise<void> {
    // Every run is created before the first await, so a stopAll that follows sees all of them.
    const runs = Object.entries(this.options.services).map(([name, config]) => this.runOf(name, config));
    const results = await Promise.allSettled(runs.map((run) => run.ready));
    if (this.state === "closed") throw new ServicesClosedError(this.options.cwd);
    const failures = results.flatMap((result) => (result.status === "rejected" ? [result.reason as Error] : []));
    const [first] = failures;
    if (failures.length === 1 && first) throw first;
    if (failures.length > 1) {
      const messages = failures.map((failure) => failure.message).join("\n");
      const summary = `${failures.length} services of ${this.options.cwd} failed to start`;
      throw new AggregateError(failures, `${summary}:\n${messages}`);
    }
  }

  /**
   * The service's running run, or a new one that starts once the previous run's group is gone. A run without a sandbox
   * is replaced by a sandboxed one once a session of the location has a sandbox: never left serving it unsandboxed.
   */
  private runOf(name: string, config: ServiceConfig): ServiceProcess {
    const previous = this.processes.get(name);
    const sandbox = this.options.sandbox?.();
    const running = previous && (previous.state === "starting" || previous.state === "ready");
    if (running && (previous.sandboxed || sandbox === undefined)) return previous;
    const run = new ServiceProcess({
      name,
      config,
      cwd: this.options.cwd,
      ledger: this.options.ledger,
      stop: this.options.stopTimeoutMs === undefined ? undefined : { graceMs: this.options.stopTimeoutMs },
      log: this.options.log ?? (() => undefined),
      after: previous?.stop(),
      sandbox,
    });
    this.processes.set(name, run);
    return run;
  }

  private async stopEverything(): Promise<void> {
    const results = await Promise.allSettled([...this.processes.values()].map((run) => run.stop()));
    await this.starting?.catch(() => undefined);
    const failures = results.flatMap((result) => (result.status === "rejected" ? [result.reason as Error] : []));
    if (failures.length > 0) {
      const messages = failures.map((failure) => failure.message).join("; ");
      const summary = `${failures.length} service(s) of ${this.options.cwd} could not be stopped`;
      throw new AggregateError(failures, `${summary}: ${messages}`);
    }
  }
}
