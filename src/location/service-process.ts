import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import type { ServiceConfig } from "../config/config-schema.js";
import type { ProcessGroupLedger } from "../processes/ledger.js";
import { describeExit, spawnGroup, type ExitStatus, type SpawnedGroup } from "../processes/spawn-group.js";
import type { StopOptions, StopOutcome } from "../processes/stop-group.js";
import { allocatePort, LOOPBACK_HOST } from "./port-allocation.js";
import { launchArguments } from "./service-launch.js";
import { TerminalOutput } from "./terminal-output.js";
import { waitForPort } from "./wait-for-port.js";

/** Output kept per stream, for error messages and log lines. */
const SERVICE_OUTPUT_TAIL_BYTES = 64 * 1024;
/** How much of the kept output an error message quotes. */

/**
 * `starting` → `ready` → `exited` (on its own) or `stopping` → `stopped`;
 * `starting` → `failed` (spawn error, exit or timeout before ready; the group is stopped)
 * or `stopping` (called off). `failed` and `exited` are final for this run: the
 * next start of the service is a new {@link ServiceProcess}.
 */
export type ServiceState = "starting" | "ready" | "failed" | "stopping" | "stopped" | "exited";

export type ServiceLog = (line: string, fields: Record<string, unknown>) => void;

export interface ServiceProcessOptions {
  readonly name: string;
  readonly config: ServiceConfig;
  /** The location's directory, where the service runs. */
  readonly cwd: string;
  readonly ledger?: ProcessGroupLedger;
  readonly stop?: StopOptions;
  readonly log: ServiceLog;
  /** This run starts only once the previous run of the service has gone (its group stopped). */
  readonly after?: Promise<unknown>;
  /** The sandbox this run starts in, if the location's sessions have one. */
  readonly sandbox?: SandboxPlan;
}

/** One run of one configured service: its process group, its port, its output tail. */
export class ServiceProcess {
  /** Settles when the service is ready; rejects naming the service when it cannot start or its start is called off. */
  readonly ready: Promise<void>;
  private current: ServiceState = "starting";
  private group: SpawnedGroup | undefined;
  private allocatedPort: number | undefined;
  private leaderExit: ExitStatus | undefined;
  /** Aborted by {@link stop}: ends a start under way. */
  private readonly calledOff = new AbortController();
  /** Aborted when the group leader exits: ends the wait for the port. */
  private readonly leaderGone = new AbortController();
  private readonly stdout = new TerminalOutput(SERVICE_OUTPUT_TAIL_BYTES);
  private readonly stderr = new TerminalOutput(SERVICE_OUTPUT_TAIL_BYTES);
  private groupStop: Promise<StopOutcome | undefined> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: ServiceProcessOptions) {
    this.ready = this.start();
    // Whoever asked for the start is told; a failure must not also surface as unhandled.
    this.ready.catch(() => undefined);
  }

  get name(): string {
    return this.options.name;
  }

  get state(): ServiceState {
    return this.current;
  }

  get pid(): number | undefined {
    return this.group?.entry.pgid;
  }

  get port(): number | undefined {
    return this.allocatedPort;
  }

  /** Whether this run starts in a sandbox. */
  get sandboxed(): boolean {
    return this.options.sandbox !== undefined;
  }

  /** Stops the whole process group, calling off a start under way; once, awaited by every caller. */
  stop(): Promise<void> {
    this.stopping ??= this.runStop();
    return this.stopping;
  }

  private async runStop(): Promise<void> {
    if (this.current === "starting" || this.current === "ready") this.current = "stopping";
    this.calledOff.abort();
    await this.ready.catch(() => undefined);
    const outcome = await this.stopOwnGroup();
    if (this.current !== "stopping") return;
    this.current = "stopped";
    this.log("service stopped", { outcome });
  }

  private async start(): Promise<void> {
    let failure: Error | undefined;
    try {
      failure = await this.launch();
    } catch (error) {
      failure = error as Error;
    }
    if (this.calledOff.signal.aborted) {
      throw new Error(`service ${JSON.stringify(this.name)} was stopped before it was ready`, { cause: failure });
    }
    if (failure === undefined) return this.becomeReady();
    this.current = "failed";
    await this.stopOwnGroup().catch(() => undefined);
    const error = new Error(`${failure.message}${this.group ? this.outputTail() : ""}`, { cause: failure.cause });
    this.log("service failed", { error: error.message });
    throw error;
  }

  /** Resolves `undefined` once the service is ready, or with why it is not. */
  private async launch(): Promise<Error | undefined> {
    const { config, name } = this.options;
    await this.options.after?.catch(() => undefined);
    if (this.calledOff.signal.aborted) return undefined;
    const port = config.port === "auto" ? await this.allocatePort() : undefined;
    this.allocatedPort = port;
    if (this.calledOff.signal.aborted) return undefined;
    await this.spawn(port);
    if (port === undefined) return undefined;
    const outcome = await waitForPort(port, {
      timeoutMs: config.readyTimeout,
      signal: AbortSignal.any([this.calledOff.signal, this.leaderGone.signal]),
    });
    const service = `service ${JSON.stringify(name)}`;
    const where = `${LOOPBACK_HOST}:${port}`;
    if (outcome === "timed-out") {
      return new Error(`${service} did not accept connections on ${where} within ${config.readyTimeout} ms`);
    }
    if (outcome === "aborted" && this.leaderExit) {
      return new Error(`${service} exited (${describeExit(this.leaderExit)}) before it accepted connections on ${where}`);
    }
    return undefined;
  }

  private async spawn(port: number | undefined): Promise<void> {
    const { config, name } = this.options;
    const { args, env } = launchArguments(config, port);
    const group = await spawnGroup({
      command: config.command,
      args,
      cwd: this.options.cwd,
      env,
      kind: "service",
      label: `service ${name}`,
      ledger: this.options.ledger,
      stop: this.options.stop,
      sandbox: this.options.sandbox,
    }).catch((error: Error) => this.cannotStart(error));
    this.group = group;
    const { child } = group;
    child.stdout?.on("data", (chunk: Buffer) => this.stdout.append(chunk));
    child.stderr?.on("data", (chunk: Buffer) => this.stderr.append(chunk));
    void group.exited.then((status) => this.onLeaderExit(status));
    this.log("service started", { pid: group.entry.pgid, port });
  }

  private allocatePort(): Promise<number> {
    return allocatePort().catch((error: Error) => this.cannotStart(error));
  }

  private cannotStart(error: Error): never {
    throw new Error(`service ${JSON.stringify(this.name)} could not start: ${error.message}`, { cause: error });
  }

  private becomeReady(): void {
    this.current = "ready";
    this.log("service ready", { pid: this.pid, port: this.port });
    // The leader may have exited between the port answering and now.
    if (this.leaderExit) this.noticeExit(this.leaderExit);
  }

  private onLeaderExit(status: ExitStatus): void {
    this.leaderExit = status;
    this.leaderGone.abort();
    if (this.current === "ready") this.noticeExit(status);
  }

  /** A ready service ended on its own: whatever it left in its group is stopped too. */
  private noticeExit(status: ExitStatus): void {
    this.current = "exited";
    this.log(`service exited (${describeExit(status)})`, { ...status, pid: this.pid, stderr: this.stderr.quotedTail() });
    this.stopOwnGroup().catch((error: unknown) => {
      this.log("service process group could not be stopped", { pid: this.pid, error: (error as Error).message });
    });
  }

  /** Stops the group (once) and lets go of its pipes; `undefined` when nothing was spawned. */
  private stopOwnGroup(): Promise<StopOutcome | undefined> {
    this.groupStop ??= (async () => {
      const group = this.group;
      if (!group) return undefined;
      const outcome = await group.stop();
      // The last words of a dying service are kept.
      await group.outputDrained();
      // A process that left the group may still hold the pipes; they are no longer read.
      group.child.stdout?.destroy();
      group.child.stderr?.destroy();
      return outcome;
    })();
    return this.groupStop;
  }

  /** The end of what the service wrote, stderr first, for an error message. */
  private outputTail(): string {
    for (const [stream, output] of [
      ["stderr", this.stderr],
      ["stdout", this.stdout],
    ] as const) {
      const text = output.quotedTail();
      if (text.length > 0) return `; its ${stream} ends with:\n${text}`;
    }
    return "; it wrote nothing to stderr or stdout";
  }

  private log(line: string, fields: Record<string, unknown>): void {
    this.options.log(line, { service: this.name, directory: this.options.cwd, ...fields });
  }
}
