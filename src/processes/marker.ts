import { readdirSync, readFileSync } from "node:fs";
import { isRunning, readProcStat, type ProcStat } from "./proc-stat.js";

/**
 * The environment variable that marks every process of one tracked tree. A child inherits its
 * parent's environment through `fork`, `setsid`, double forks and `exec`, so a daemon that left
 * the process group still carries it, and `/proc/<pid>/environ` shows it to the host. Its value
 * is `<scope>.<group>`: the scope names the data directory, so a start-up can reap everything a
 * dead previous run on the same directory left, and the group names one agent, terminal or service.
 */
const MARKER_VARIABLE = "BERTH_GROUP";

/** Which markers a scan matches: one group's exact value, or every group of a scope. */
export type MarkerMatch = { readonly exact: string } | { readonly prefix: string };

/** What one scan of `/proc` found and what it cost. */
export interface MarkerScan {
  readonly matches: ProcStat[];
  /** Processes whose environment was read. */
  readonly scanned: number;
  readonly elapsedMs: number;
}

/**
 * Every running process (zombies excluded) whose environment carries a matching marker. The
 * host's own process and its ancestors are never matched: a host started from inside a tracked
 * tree must not stop itself. Processes of other users cannot be read and are skipped: the
 * kernel would refuse to signal them anyway.
 */
export function scanMarked(match: MarkerMatch): MarkerScan {
  const started = performance.now();
  // Stryker disable next-line all: a mutant here can make a stop signal every process of the machine (docs/lifecycle.md, "Mutation testing")
  const needle = Buffer.from(`${MARKER_VARIABLE}=${"exact" in match ? match.exact : match.prefix}`);
  const exact = "exact" in match;
  const spared = ownLineage();
  const matches: ProcStat[] = [];
  let scanned = 0;
  for (const entry of readdirSync("/proc")) {
    // Not a process's directory ("self", "sys"...): not a number.
    const pid = Number(entry);
    if (!Number.isInteger(pid) || spared.has(pid)) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${pid}/environ`);
    } catch {
      continue; // gone meanwhile, a kernel thread, or another user's
    }
    scanned++;
    // Stryker disable next-line all: a mutant here can make a stop signal every process of the machine (docs/lifecycle.md, "Mutation testing")
    if (!carries(environ, needle, exact)) continue;
    const stat = safeStat(pid);
    if (isRunning(stat)) matches.push(stat);
  }
  return { matches, scanned, elapsedMs: performance.now() - started };
}

/** The environment to start a tracked child with: `base` (default the host's) plus the marker. */
export function markedEnvironment(base: NodeJS.ProcessEnv | undefined, marker: string): NodeJS.ProcessEnv {
  return { ...(base ?? process.env), [MARKER_VARIABLE]: marker };
}

// Stryker disable all: a mutant of the match can make a stop signal every process of the machine (docs/lifecycle.md, "Mutation testing")
/** True when one `NAME=value` entry of the NUL-separated block starts with (or is) the needle. */
function carries(environ: Buffer, needle: Buffer, exact: boolean): boolean {
  let from = 0;
  for (;;) {
    const at = environ.indexOf(needle, from);
    if (at < 0) return false;
    const entryStart = at === 0 || environ[at - 1] === 0;
    const end = at + needle.length;
    const entryEnd = end === environ.length || environ[end] === 0;
    if (entryStart && (!exact || entryEnd)) return true;
    from = at + 1;
  }
}
// Stryker restore all

/** This process and its ancestors below init, as `/proc/<pid>/status` tells them. */
export function ownLineage(): Set<number> {
  const lineage = new Set<number>([process.pid]);
  let pid = process.ppid;
  for (let depth = 0; pid > 1 && depth < 64; depth++) {
    lineage.add(pid);
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      break;
    }
    const parent = /^PPid:\s+(\d+)/m.exec(status);
    pid = parent ? Number(parent[1]) : 0;
  }
  return lineage;
}

function safeStat(pid: number): ProcStat | undefined {
  try {
    return readProcStat(pid);
  } catch {
    return undefined;
  }
}
