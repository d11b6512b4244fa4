import { readdirSync, readFileSync } from "node:fs";

/** The fields of `/proc/<pid>/stat` that process-group bookkeeping needs. */
export interface ProcStat {
  readonly pid: number;
  /** One-letter state: R, S, D, Z (zombie), X (dead), ... */
  readonly state: string;
  readonly pgid: number;
  /** Field 22: clock ticks since boot at which the process started. */
  readonly startTicks: number;
}

/** Parses one `/proc/<pid>/stat` line; the command name may itself hold spaces and parentheses. */
export function parseProcStat(line: string): ProcStat {
  const open = line.indexOf("(");
  const close = line.lastIndexOf(")");
  if (open < 0 || close < open) throw new Error(`malformed /proc stat line: ${JSON.stringify(line.slice(0, 80))}`);
  // Fields after the command name start at field 3 (state).
  const rest = line.slice(close + 2).split(" ");
  const field = (n: number): string => {
    const value = rest[n - 3];
    if (value === undefined) throw new Error(`/proc stat line has no field ${n}: ${JSON.stringify(line.slice(0, 80))}`);
    return value;
  };
  return {
    pid: Number(line.slice(0, open).trim()),
    state: field(3),
    pgid: Number(field(5)),
    startTicks: Number(field(22)),
  };
}

/** The stat of a process, or undefined when there is no such process. */
export function readProcStat(pid: number): ProcStat | undefined {
  let line: string;
  try {
    line = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  return parseProcStat(line);
}

/** A zombie has exited and only waits to be reaped by its parent; it runs nothing. */
export function isRunning(stat: ProcStat | undefined): stat is ProcStat {
  return stat !== undefined && stat.state !== "Z" && stat.state !== "X";
}

/** Every process of a group that has not exited (zombies excluded). */
export function runningGroupMembers(pgid: number): ProcStat[] {
  const members: ProcStat[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    // Stryker disable next-line all: a mutant here makes every process of the machine a member to stop (docs/lifecycle.md, "Mutation testing")
    if (isRunning(stat) && stat.pgid === pgid) members.push(stat);
  }
  return members;
}

let bootId: string | undefined;

/** Identifies this boot of the machine; start ticks are only comparable within one boot. */
export function readBootId(): string {
  bootId ??= readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  return bootId;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  // ESRCH: the process vanished between opening and reading its stat file.
  return code === "ENOENT" || code === "ESRCH";
}
