import { createHash, randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { createCgroup, enroll, ownCgroupDirectory, prepareScopeCgroup, deleteCgroup, subCgroups } from "./cgroup.js";
import type { ProcessGroupLedger } from "./ledger.js";
import { stopTree, type ProcessTree, type StopOptions, type StopOutcome } from "./stop-group.js";

/** How one tracked child is found again, whatever it does to its process group. */
export interface TreeTag {
  /** The value of `BERTH_GROUP` in its environment and its descendants'. */
  readonly marker: string;
  /** Its own cgroup, when the host may create cgroups here. */
  readonly cgroup?: string;
}

export interface ScopeOptions {
  /**
   * Use cgroup v2 where the host may create cgroups (default: only with `BERTH_CGROUPS=on`). Opt-in
   * while a stall is explained: under load, a daemon forked right after the host stepped back out
   * of its cgroup was seen never to fork again (docs/security.md).
   */
  readonly cgroups?: boolean;
}

/**
 * Every process tree a host starts on one data directory. The scope's key is derived from the
 * directory, so the next run on that directory (after a crash, SIGKILL included) finds what this
 * run left by the same marker prefix and in the same cgroup directory, and reaps it.
 */
export class ProcessScope {
  private cgroupDir: string | undefined | null = null;

  private constructor(
    /** Short and stable: the first 12 hex digits of the SHA-256 of the directory's real path. */
    readonly key: string,
    private readonly useCgroups: boolean,
  ) {}

  static forDataDir(dataDir: string, options: ScopeOptions = {}): ProcessScope {
    let real = dataDir;
    try {
      real = realpathSync(dataDir);
    } catch {
      // A directory that does not exist yet has no symlink to resolve.
    }
    const key = createHash("sha256").update(real).digest("hex").slice(0, 12);
    return new ProcessScope(key, options.cgroups ?? process.env.BERTH_CGROUPS === "on");
  }

  /** For children started without a host's ledger (tools, tests): marker only, keyed to this process. */
  static ofThisProcess(): ProcessScope {
    thisProcess ??= new ProcessScope(`p${process.pid}`, false);
    return thisProcess;
  }

  /** The scope's cgroup directory, created on first use; undefined when cgroups cannot be used. */
  get cgroupDirectory(): string | undefined {
    if (this.cgroupDir === null) this.cgroupDir = this.useCgroups ? prepareScopeCgroup(`berth-${this.key}`) : undefined;
    return this.cgroupDir;
  }

  /** A fresh tag for a child about to start; its cgroup, if any, is created now. */
  newTree(): TreeTag {
    const id = randomBytes(6).toString("hex");
    const dir = this.cgroupDirectory;
    const cgroup = dir ? createCgroup(dir, `g-${id}`) : undefined;
    return cgroup ? { marker: `${this.key}.${id}`, cgroup } : { marker: `${this.key}.${id}` };
  }

  /**
   * Runs `spawn` (synchronous up to the fork) with the child born inside its cgroup: node has no
   * `CLONE_INTO_CGROUP`, and moving the child after `spawn` returns races its first fork (a
   * shell's `( ... & )` is faster than the host's write). So the host steps into the child's
   * cgroup for the duration of the fork and steps back out, with no await in between. If the
   * host cannot step in, the child is moved after the fork (its marker covers that moment);
   * the returned tag has no cgroup if neither works.
   */
  spawnInside<T extends { pid?: number | undefined }>(tag: TreeTag, spawn: () => T): { child: T; tag: TreeTag } {
    const home = ownCgroupDirectory();
    if (!tag.cgroup || !home) return { child: spawn(), tag: tag.cgroup ? this.withoutCgroup(tag) : tag };
    const stepped = enroll(tag.cgroup, process.pid);
    let child: T;
    try {
      child = spawn();
    } finally {
      if (stepped && !enroll(home, process.pid)) {
        // Never stay in a cgroup that a stop kills as a whole.
        // biome-ignore lint/correctness/noUnsafeFinally: deliberate: this failure outranks whatever spawn() threw
        throw new Error(`cannot move the host back to its cgroup ${home} from ${tag.cgroup}`);
      }
    }
    if (child.pid === undefined) return { child, tag: this.withoutCgroup(tag) };
    if (stepped || enroll(tag.cgroup, child.pid)) return { child, tag };
    return { child, tag: this.withoutCgroup(tag) };
  }

  private withoutCgroup(tag: TreeTag): TreeTag {
    if (tag.cgroup) deleteCgroup(tag.cgroup);
    return { marker: tag.marker };
  }

  /**
   * Stops every process any run of this scope left: all markers with the scope's prefix, all
   * cgroups under the scope's directory. At start-up (under the data directory's lock) nothing
   * of this run exists yet, so everything found is a leftover; at shutdown it sweeps what a
   * stopped child's escaped descendants may still hold.
   */
  async reapAll(options: StopOptions = {}): Promise<ScopeReap> {
    const started = performance.now();
    const dir = this.cgroupDirectory;
    const cgroups = dir ? subCgroups(dir) : [];
    // Stryker disable next-line all: an empty prefix would match every Berth process of the machine, other hosts' included (docs/lifecycle.md, "Mutation testing")
    const tree: ProcessTree = { marker: { prefix: `${this.key}.` }, cgroups };
    const outcome = await stopTree(tree, options);
    this.tidy();
    return { outcome, cgroups: cgroups.length, elapsedMs: performance.now() - started };
  }

  /** After a tree's stop: the scope's cgroup directory goes once its last tree's cgroup went. */
  tidy(): void {
    if (this.cgroupDir && subCgroups(this.cgroupDir).length === 0) this.deleteCgroupDirectory();
  }

  /** Removes the scope's cgroup directory if nothing is left in it. */
  deleteCgroupDirectory(): void {
    if (this.cgroupDir) deleteCgroup(this.cgroupDir);
    this.cgroupDir = null;
  }
}

export interface ScopeReap {
  readonly outcome: StopOutcome;
  /** Leftover cgroups found. */
  readonly cgroups: number;
  readonly elapsedMs: number;
}

let thisProcess: ProcessScope | undefined;
const scopes = new WeakMap<ProcessGroupLedger, ProcessScope>();

/**
 * Ties a ledger (one data directory's) to its scope: whoever spawns with that ledger marks and
 * encloses its children in that scope. The host does this once, before it starts any child.
 */
export function attachScope(ledger: ProcessGroupLedger, scope: ProcessScope): void {
  scopes.set(ledger, scope);
}

/** The scope children spawned with `ledger` belong to. */
export function scopeOf(ledger: ProcessGroupLedger | undefined): ProcessScope {
  return (ledger && scopes.get(ledger)) ?? ProcessScope.ofThisProcess();
}
