import { createHash, randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { createCgroup, ensureCgroup, launchInCgroup, probeCgroups, probeCgroupsAsync, deleteCgroup, subCgroups, type Launch } from "./cgroup.js";
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
   * Use cgroup v2 where the host may create cgroups (default: yes, unless `BERTH_CGROUPS=off`).
   * Where it may not, or with this off, the environment marker alone tracks descendants.
   */
  readonly cgroups?: boolean;
}

/** How a scope finds its children's descendants; logged at start-up and shown in the metrics. */
export type ProcessTracking =
  /** A cgroup per child under `directory`, and the environment marker. */
  | { readonly mode: "cgroup"; readonly directory: string }
  /** The environment marker alone, for `reason`. */
  | { readonly mode: "marker"; readonly reason: string };

/**
 * Every process tree a host starts on one data directory. The scope's key is derived from the
 * directory, so the next run on that directory (after a crash, SIGKILL included) finds what this
 * run left by the same marker prefix and in the same cgroup directory, and reaps it.
 */
export class ProcessScope {
  private probed: ProcessTracking | undefined;
  private probing: Promise<ProcessTracking> | undefined;

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
    return new ProcessScope(key, options.cgroups ?? process.env.BERTH_CGROUPS !== "off");
  }

  /** For children started without a host's ledger (tools, tests): marker only, keyed to this process. */
  static ofThisProcess(): ProcessScope {
    thisProcess ??= new ProcessScope(`p${process.pid}`, false);
    return thisProcess;
  }

  /** Cgroups or the marker alone, found out on first use (a probe that leaves nothing behind) unless {@link probe} did. */
  get tracking(): ProcessTracking {
    // Both probes would make the same probe cgroup, and the second would wrongly find cgroups unusable.
    if (this.probed === undefined && this.probing !== undefined) throw new Error("the scope's tracking was read while its probe still ran");
    this.probed ??= this.useCgroups ? trackingOf(probeCgroups(`berth-${this.key}`)) : MARKER_TURNED_OFF;
    return this.probed;
  }

  /**
   * Finds out {@link tracking} without blocking the event loop (the host, at start, alongside its other work). Once
   * begun, nothing reads `tracking` before it settles: the two probes would make the same probe cgroup.
   */
  probe(): Promise<ProcessTracking> {
    this.probing ??= this.probed
      ? Promise.resolve(this.probed)
      : this.useCgroups
        ? probeCgroupsAsync(`berth-${this.key}`).then(trackingOf)
        : Promise.resolve(MARKER_TURNED_OFF);
    return this.probing.then((tracking) => (this.probed ??= tracking));
  }

  /** The scope's cgroup directory while cgroups are in use; it exists only while it holds a tree's cgroup. */
  get cgroupDirectory(): string | undefined {
    const tracking = this.tracking;
    // Stryker disable next-line ConditionalExpression: a marker tracking has no directory: undefined either way
    return tracking.mode === "cgroup" ? tracking.directory : undefined;
  }

  /** A fresh tag for a child about to start; its cgroup, if any, is created now. */
  newTree(): TreeTag {
    const id = randomBytes(6).toString("hex");
    const dir = this.cgroupDirectory;
    const cgroup = dir && ensureCgroup(dir) === true ? createCgroup(dir, `g-${id}`) : undefined;
    return cgroup ? { marker: `${this.key}.${id}`, cgroup } : { marker: `${this.key}.${id}` };
  }

  /**
   * How to start `launch` for the tree `tag`: through a launcher that moves the child into the
   * tree's cgroup before the command runs, so its first fork is already inside (moving it after
   * `spawn` returns would race that fork). The returned tag has no cgroup if the launcher cannot
   * carry this command.
   */
  launch(tag: TreeTag, launch: Launch): { launch: Launch; tag: TreeTag } {
    if (!tag.cgroup) return { launch, tag };
    const launcher = launchInCgroup(tag.cgroup, launch);
    if (launcher) return { launch: launcher, tag };
    this.discard(tag);
    return { launch, tag: { marker: tag.marker } };
  }

  /** Removes the cgroup of a tree that never started. */
  discard(tag: TreeTag): void {
    // Stryker disable next-line ConditionalExpression: deleteCgroup(undefined) removes nothing (its reads and rmdir fail)
    if (tag.cgroup) deleteCgroup(tag.cgroup);
    this.tidy();
  }

  /**
   * Stops every process any run of this scope left: all markers with the scope's prefix, all
   * cgroups under the scope's directory. At start-up (under the data directory's lock) nothing
   * of this run exists yet, so everything found is a leftover; at shutdown it sweeps what a
   * stopped child's escaped descendants may still hold. Either way no child is starting, so
   * every empty cgroup is removed too.
   */
  async reapAll(options: StopOptions = {}): Promise<ScopeReap> {
    const started = performance.now();
    const dir = this.cgroupDirectory;
    const cgroups = dir ? subCgroups(dir) : [];
    // Stryker disable next-line all: an empty prefix would match every Berth process of the machine, other hosts' included (docs/lifecycle.md, "Mutation testing")
    const tree: ProcessTree = { marker: { prefix: `${this.key}.` }, cgroups };
    const outcome = await stopTree(tree, options);
    this.deleteEmptyCgroups();
    return { outcome, cgroups: cgroups.length, elapsedMs: performance.now() - started };
  }

  /** The scope's cgroup directory goes once its last tree's cgroup went. */
  tidy(): void {
    // Stryker disable next-line ConditionalExpression: a marker tracking has no directory: undefined either way
    const dir = this.probed?.mode === "cgroup" ? this.probed.directory : undefined;
    if (dir && subCgroups(dir).length === 0) deleteCgroup(dir);
  }

  /**
   * When no child of this scope can be starting (the host stopped, or not yet started): every
   * empty cgroup goes, and the scope's directory with them. A tree's cgroup is empty for a moment
   * before its child moves in, so this never runs while children may start.
   */
  deleteEmptyCgroups(): void {
    // Stryker disable next-line ConditionalExpression,OptionalChaining: reapAll probed already, and a marker tracking has no directory
    const dir = this.probed?.mode === "cgroup" ? this.probed.directory : undefined;
    // Stryker disable next-line ConditionalExpression: deleteCgroup(undefined) removes nothing
    if (dir) deleteCgroup(dir);
  }
}

const MARKER_TURNED_OFF: ProcessTracking = { mode: "marker", reason: "turned off (BERTH_CGROUPS=off)" };

function trackingOf(probe: ReturnType<typeof probeCgroups>): ProcessTracking {
  return "directory" in probe ? { mode: "cgroup", directory: probe.directory } : { mode: "marker", reason: probe.reason };
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
