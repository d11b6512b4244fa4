import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { once } from "node:events";
import { statSync } from "node:fs";
import { groupIsAlive } from "./group-signals.js";
import type { LedgerEntry, ProcessGroupLedger, ProcessKind } from "./ledger.js";
import { cgroupPopulated, deleteCgroup } from "./cgroup.js";
import { findExecutable } from "./find-executable.js";
import { markedEnvironment } from "./marker.js";
import { readBootId, readProcStat } from "./proc-stat.js";
import { scopeOf, type ProcessScope, type TreeTag } from "./scope.js";
import { stopTree, type StopOptions, type StopOutcome } from "./stop-group.js";
import { sandboxedCommand, type SandboxPlan } from "../sandbox/bwrap-args.js";

export interface SpawnGroupOptions {
  readonly command: string;
  readonly args?: readonly string[];
  /** Must be an existing directory; defaults to the host's working directory. */
  readonly cwd?: string;
  /** The child's whole environment; defaults to the host's. */
  readonly env?: NodeJS.ProcessEnv;
  /** Defaults to no stdin and piped stdout and stderr. */
  readonly stdio?: StdioOptions;
  readonly kind: ProcessKind;
  /** For log lines; defaults to the command line. */
  readonly label?: string;
  /**
   * Told about the group when it starts and when it is gone. The ledger's scope (see
   * `attachScope`) decides the child's marker and cgroup.
   */
  readonly ledger?: ProcessGroupLedger;
  /** How {@link SpawnedGroup.stop} stops the group. */
  readonly stop?: StopOptions;
  /**
   * Runs the command inside this bubblewrap sandbox (docs/sandbox.md). bwrap leads the group; the command and all it
   * starts live in bwrap's PID namespace, whose init is in the group: the stop's kill ends the namespace, and with it
   * every `setsid` daemon in it.
   */
  readonly sandbox?: SandboxPlan;
}

/** How the group leader ended: an exit code, or the signal that ended it. */
export interface ExitStatus {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** `exit code 3` or `signal SIGKILL`, for messages and log lines. */
export function describeExit(status: ExitStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${String(status.exitCode)}`;
}

/** A child that leads its own process group, with the identity the ledger keeps for it. */
export interface SpawnedGroup {
  readonly child: ChildProcess;
  readonly entry: LedgerEntry;
  /** How every descendant is found again, even one that left the group (`setsid`). */
  readonly tag: TreeTag;
  /** Settles when the group leader exits; other members may outlive it. */
  readonly exited: Promise<ExitStatus>;
  /** Settles when the child's output pipes have closed. */
  readonly outputClosed: Promise<void>;
  /**
   * The output pipes closed, or a short bounded wait passed: whatever a dying process wrote last
   * has been read. A process that left the group may hold the pipes forever, hence the bound.
   */
  outputDrained(): Promise<void>;
  /**
   * Stops the whole tree once: the group, every process carrying the child's marker and every
   * process in its cgroup, even after the leader exited. Later calls return the same outcome.
   */
  stop(): Promise<StopOutcome>;
}

/**
 * Starts `command` (no shell) as the leader of a new process group: its pgid
 * is its pid, and everything it starts belongs to the group unless it leaves.
 * Every descendant also inherits the marker `BERTH_GROUP=<scope>.<id>` and, where the host may
 * create cgroups, starts in the child's own cgroup, so one that leaves the group is still found.
 * Rejects with an error naming the command or directory when it cannot start.
 */
export async function spawnGroup(options: SpawnGroupOptions): Promise<SpawnedGroup> {
  const args = options.args ?? [];
  if (options.cwd !== undefined) assertDirectory(options.cwd);
  const scope = scopeOf(options.ledger);
  const fresh = scope.newTree();
  const env = markedEnvironment(options.env, fresh.marker);
  const cwd = options.cwd ?? process.cwd();
  const started = options.sandbox ? sandboxedCommand(options.sandbox, options.command, args, cwd) : { command: options.command, args };
  const { launch, tag } = scope.launch(fresh, { command: started.command, args: started.args, env });
  if (tag.cgroup || options.sandbox) {
    // Through a launcher (or bwrap) a missing command would only be an exit code: named here instead, as spawn would.
    const found = findExecutable(options.command, cwd, env.PATH);
    if ("code" in found) {
      scope.discard(tag);
      throw cannotStart(options.command, Object.assign(new Error(found.code), { code: found.code }));
    }
  }
  let child: ChildProcess;
  try {
    child = spawn(launch.command, launch.args, {
      cwd: options.cwd,
      env: launch.env,
      stdio: options.stdio ?? ["ignore", "pipe", "pipe"],
      detached: true,
    });
  } catch (error) {
    // Some failures (ENOTDIR, E2BIG) are thrown at once rather than emitted.
    scope.discard(tag);
    throw cannotStart(options.command, error as NodeJS.ErrnoException);
  }
  if (child.pid === undefined) {
    const [error] = (await once(child, "error")) as [NodeJS.ErrnoException];
    scope.discard(tag);
    throw cannotStart(options.command, error);
  }
  // Read now: the child cannot have been reaped yet, so this pid is still ours.
  const stat = readProcStat(child.pid);
  if (!stat) {
    throw new Error(`process ${child.pid} of ${JSON.stringify(options.command)} vanished before it was recorded`);
  }
  const entry: LedgerEntry = {
    pgid: child.pid,
    startTicks: stat.startTicks,
    bootId: readBootId(),
    kind: options.kind,
    label: options.label ?? [options.command, ...args].join(" "),
    startedAt: Date.now(),
  };
  return new LiveGroup(child, entry, tag, scope, options.ledger, options.stop ?? {});
}

/**
 * `running` → `leader-exited` (members may remain) → `gone`. Once gone the pgid
 * is never signalled again: the kernel may hand the number to someone else.
 */
type GroupState = "running" | "leader-exited" | "gone";

/** How long `outputDrained` waits for the pipes to close after the process is gone. */
const OUTPUT_DRAIN_MS = 100;

class LiveGroup implements SpawnedGroup {
  readonly exited: Promise<ExitStatus>;
  readonly outputClosed: Promise<void>;
  private state: GroupState = "running";
  private stopping: Promise<StopOutcome> | undefined;

  constructor(
    readonly child: ChildProcess,
    readonly entry: LedgerEntry,
    readonly tag: TreeTag,
    private readonly scope: ProcessScope,
    private readonly ledger: ProcessGroupLedger | undefined,
    private readonly stopOptions: StopOptions,
  ) {
    ledger?.add(entry);
    this.exited = new Promise((resolve) => {
      child.once("exit", (exitCode, signal) => {
        this.onLeaderExit();
        resolve({ exitCode, signal });
      });
    });
    this.outputClosed = new Promise((resolve) => child.once("close", () => resolve()));
  }

  outputDrained(): Promise<void> {
    return Promise.race([this.outputClosed, new Promise<void>((resolve) => setTimeout(resolve, OUTPUT_DRAIN_MS).unref())]);
  }

  stop(): Promise<StopOutcome> {
    this.stopping ??= this.runStop();
    return this.stopping;
  }

  private async runStop(): Promise<StopOutcome> {
    // Once the group is gone its id is never signalled again; its marker and cgroup still lead to escapees.
    if (this.state === "leader-exited" && this.groupIdReused()) this.markGone();
    const pgid = this.state === "gone" ? undefined : this.entry.pgid;
    const cgroups = this.tag.cgroup ? [this.tag.cgroup] : [];
    const outcome = await stopTree({ pgid, marker: { exact: this.tag.marker }, cgroups }, this.stopOptions);
    this.scope.tidy();
    this.markGone();
    return outcome;
  }

  /**
   * The kernel hands out no pid that is still a group's id, so another process under the
   * leader's pid means the group died unseen (its last member left after the leader exited) and
   * its id now belongs to someone else.
   */
  private groupIdReused(): boolean {
    const holder = readProcStat(this.entry.pgid);
    return holder !== undefined && holder.startTicks !== this.entry.startTicks;
  }

  private onLeaderExit(): void {
    if (this.state !== "running") return;
    this.state = "leader-exited";
    if (!groupIsAlive(this.entry.pgid)) this.markGone();
  }

  private markGone(): void {
    if (this.state === "gone") return;
    this.state = "gone";
    this.ledger?.delete(this.entry.pgid);
    // An empty cgroup is removed now; one an escapee still holds waits for the stop or the sweep.
    if (this.tag.cgroup && !cgroupPopulated(this.tag.cgroup) && deleteCgroup(this.tag.cgroup)) this.scope.tidy();
  }
}

function assertDirectory(cwd: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch {
    throw new Error(`working directory does not exist: ${cwd}`);
  }
  if (!isDirectory) throw new Error(`working directory is not a directory: ${cwd}`);
}

function cannotStart(command: string, error: NodeJS.ErrnoException): Error {
  // Node's refusal of an argument or variable (a NUL in it) quotes its value, which may be a secret (a login's
  // variable): neither those words nor the error itself go on.
  if (error.code === "ERR_INVALID_ARG_VALUE") {
    return new Error(`cannot start command ${JSON.stringify(command)}: ${error.message.replace(/\. Received [\s\S]*$/, "")}`);
  }
  return new Error(`cannot start command ${JSON.stringify(command)}: ${describeSpawnError(error)}`, { cause: error });
}

function describeSpawnError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case "ENOENT":
      return "no such command (ENOENT)";
    case "EACCES":
      return "not executable (EACCES)";
    default:
      return error.message;
  }
}
