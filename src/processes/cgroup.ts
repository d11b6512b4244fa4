import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { settle, settleSync, type Probing } from "./probe-command.js";

/**
 * cgroup v2, where the host may use it: one cgroup per tracked tree under
 * `<the host's own cgroup>/berth-<scope>/`. A process cannot leave a cgroup without write access
 * to another, so `setsid`, double forks and a cleared environment do not escape it, and
 * `cgroup.kill` (Linux 5.14+) kills every member at once, including one forked meanwhile.
 * Each child moves itself into its cgroup before its command starts ({@link launchInCgroup});
 * the host itself never changes cgroup.
 */

/** The unified hierarchy's mount point and the host's own cgroup in it, if there is one. */
function ownCgroupDirectory(): string | undefined {
  let mountinfo: string;
  let membership: string;
  try {
    mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
    // Stryker disable next-line StringLiteral: without an encoding the Buffer is read as text by the RegExp all the same
    membership = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return undefined;
  }
  // mountinfo: id parent major:minor root mountpoint options [optional...] - fstype source superoptions
  let mountPoint: string | undefined;
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    // Stryker disable next-line ConditionalExpression,LogicalOperator: every mountinfo line has its " - " separator; only the empty line after the last has none
    if (!left || !right || !right.startsWith("cgroup2 ")) continue;
    const fields = left.split(" ");
    // Only a mount of the hierarchy's root maps cgroup paths one to one.
    if (fields[3] !== "/") continue;
    mountPoint = unescapeMountPath(fields[4] ?? "");
    break;
  }
  const own = /^0::(\/.*)$/m.exec(membership)?.[1];
  if (!mountPoint || own === undefined) return undefined;
  return join(mountPoint, own);
}

/** Whether this host can give each child a cgroup: the scope's directory, or why not. */
export type CgroupProbe = { readonly directory: string } | { readonly reason: string };

const SHELL = "/bin/sh";
const ENV = "/usr/bin/env";

/**
 * Finds out whether children can be put into cgroups under `<base>/<scopeName>`: the unified
 * hierarchy is mounted, the host may create cgroups under its own (root, or a delegated systemd
 * unit), the kernel has `cgroup.kill` (5.14+), and a child can move itself into one, the way
 * every child will. Leaves no directory behind. Blocks while its child runs; {@link probeCgroupsAsync} does not.
 */
export function probeCgroups(scopeName: string, base = ownCgroupDirectory()): CgroupProbe {
  return settleSync(cgroupProbing(scopeName, base));
}

/** {@link probeCgroups} without blocking the event loop while its child runs. */
export function probeCgroupsAsync(scopeName: string, base = ownCgroupDirectory()): Promise<CgroupProbe> {
  return settle(cgroupProbing(scopeName, base));
}

function cgroupProbing(scopeName: string, base: string | undefined): Probing<CgroupProbe> {
  if (!base) return { answer: { reason: "no cgroup v2 hierarchy holds this process" } };
  const dir = join(base, scopeName);
  const made = ensureCgroup(dir);
  if (made !== true) return { answer: { reason: `cannot create ${dir} (${made})` } };
  const tidy = () => {
    // Stryker disable next-line ConditionalExpression: rmdir fails on a directory with cgroups below it anyway
    if (subCgroups(dir).length === 0) tryDelete(dir);
  };
  const refused = (reason: string) => {
    tidy();
    return { answer: { reason } };
  };
  if (!existsSync(join(dir, "cgroup.kill"))) return refused(`${dir} has no cgroup.kill (Linux before 5.14)`);
  if (!isExecutable(SHELL) || !isExecutable(ENV)) return refused(`${SHELL} or ${ENV} is missing`);
  const probe = createCgroup(dir, `probe-${process.pid}`);
  if (!probe) return refused(`cannot create a cgroup under ${dir}`);
  return {
    run: { command: SHELL, args: ["-c", 'echo $$ >"$1"', "berth-cgroup-probe", join(probe, "cgroup.procs")], timeoutMs: 5_000 },
    finish: (moved) => {
      deleteCgroup(probe);
      tidy();
      if (moved.status !== 0) {
        return { reason: `a process cannot move itself into ${probe} (${moved.stderr.trim() || moved.error?.message || "refused"})` };
      }
      return { directory: dir };
    },
  };
}

/** Creates a cgroup directory unless it exists: true, or the error code that stopped it. */
export function ensureCgroup(dir: string): true | string {
  try {
    mkdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EEXIST") return code ?? String(error);
  }
  return true;
}

/** Creates one tree's cgroup; undefined if that fails. */
export function createCgroup(scopeDir: string, name: string): string | undefined {
  const dir = join(scopeDir, name);
  try {
    mkdirSync(dir);
    return dir;
  } catch {
    return undefined;
  }
}

/** A command, its arguments and its whole environment. */
export interface Launch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/**
 * The child moves itself into its cgroup, then execs the command: nothing of the command runs
 * outside it, and the host never leaves its own cgroup (the pattern of runc and systemd-run;
 * Node has no `clone3(CLONE_INTO_CGROUP)`). The shell runs with no environment and `env -i`
 * hands the command exactly its own: a shell passing it on would drop the variables whose
 * names it cannot spell (`a.b`, `BASH_FUNC_f%%`) and rewrite `PWD`. Should the move fail (the
 * cgroup removed meanwhile), the command still runs, found by its marker alone, and says so.
 */
const ENTER_CGROUP =
  '{ echo $$ >"$1"; } 2>/dev/null || echo "berth: process $$ could not enter the cgroup $1; only its BERTH_GROUP marker tracks it" >&2; shift; exec "$@"';

/**
 * How to start `launch` so that it is born in `cgroup`; undefined when its command or its
 * environment cannot pass through `env` (a command containing `=`, an empty variable name).
 */
export function launchInCgroup(cgroup: string, launch: Launch): Launch | undefined {
  if (launch.command.includes("=")) return undefined;
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(launch.env)) {
    if (value === undefined) continue;
    if (name === "") return undefined;
    pairs.push(`${name}=${value}`);
  }
  return {
    command: SHELL,
    // Stryker disable next-line StringLiteral: the launcher shell's $0 is a name for ps only
    args: ["-c", ENTER_CGROUP, "berth-enter-cgroup", join(cgroup, "cgroup.procs"), ENV, "-i", "--", ...pairs, launch.command, ...launch.args],
    env: {},
  };
}

/** The processes in the cgroup and every cgroup below it; empty when it is gone. */
export function cgroupMembers(cgroup: string): number[] {
  const pids: number[] = [];
  const visit = (dir: string) => {
    let text: string;
    try {
      text = readFileSync(join(dir, "cgroup.procs"), "utf8");
    } catch {
      return;
    }
    for (const line of text.split("\n")) if (line) pids.push(Number(line));
    for (const child of subCgroups(dir)) visit(child);
  };
  visit(cgroup);
  return pids;
}

/** True while some process is in the cgroup or below it (`cgroup.events` says `populated 1`). */
export function cgroupPopulated(cgroup: string): boolean {
  try {
    // Stryker disable next-line Regex,StringLiteral: cgroup.events has one `populated 0|1` line, a line of its own
    return /^populated 1$/m.test(readFileSync(join(cgroup, "cgroup.events"), "utf8"));
  } catch {
    return false;
  }
}

/** SIGKILLs every process in the cgroup and below it, atomically. */
export function killCgroup(cgroup: string): void {
  try {
    writeFileSync(join(cgroup, "cgroup.kill"), "1");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** Removes an empty cgroup and the empty cgroups below it; a populated one stays. */
export function deleteCgroup(cgroup: string): boolean {
  for (const child of subCgroups(cgroup)) deleteCgroup(child);
  return tryDelete(cgroup);
}

/** The cgroups directly below `dir`. */
export function subCgroups(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(dir, entry.name));
  } catch {
    return [];
  }
}

function tryDelete(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
