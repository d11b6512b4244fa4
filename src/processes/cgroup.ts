import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * cgroup v2, where the host may use it: one cgroup per tracked tree under
 * `<the host's own cgroup>/berth-<scope>/`. A process cannot leave a cgroup without write access
 * to another, so `setsid`, double forks and a cleared environment do not escape it, and
 * `cgroup.kill` (Linux 5.14+) kills every member at once, including one forked meanwhile.
 */

/** The unified hierarchy's mount point and the host's own cgroup in it, if there is one. */
export function ownCgroupDirectory(): string | undefined {
  let mountinfo: string;
  let membership: string;
  try {
    mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
    membership = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return undefined;
  }
  // mountinfo: id parent major:minor root mountpoint options [optional...] - fstype source superoptions
  let mountPoint: string | undefined;
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
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

/**
 * The directory for a scope's cgroups, created if the host may create it; undefined when cgroups
 * cannot be used here (no cgroup v2, not delegated, read-only, no `cgroup.kill`).
 */
export function prepareScopeCgroup(scopeName: string, base = ownCgroupDirectory()): string | undefined {
  if (!base) return undefined;
  const dir = join(base, scopeName);
  try {
    mkdirSync(dir, { recursive: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
  }
  if (!existsSync(join(dir, "cgroup.kill")) || !existsSync(join(dir, "cgroup.procs"))) {
    tryDelete(dir);
    return undefined;
  }
  return dir;
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

/** Moves a process (and the threads of it) into the cgroup; false if the kernel refused. */
export function enroll(cgroup: string, pid: number): boolean {
  try {
    writeFileSync(join(cgroup, "cgroup.procs"), `${pid}\n`);
    return true;
  } catch {
    return false;
  }
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

function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
