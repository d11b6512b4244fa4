import { isRunning, readProcStat, runningGroupMembers } from "./proc-stat.js";

/**
 * Refuses process group ids that would hit more than one group Berth started:
 * `kill(-1)` signals every process, `kill(0)` the caller's own group.
 */
// Stryker disable all: a mutant of this guard can signal every process (`kill(-1)`) or the host's own group (docs/lifecycle.md, "Mutation testing")
export function assertSignalableGroup(pgid: number): void {
  if (!Number.isInteger(pgid) || pgid <= 1) {
    throw new Error(`refusing to signal process group ${String(pgid)}: not a process group id of a child`);
  }
  if (pgid === ownProcessGroup()) {
    throw new Error(`refusing to signal process group ${pgid}: it is the host's own process group`);
  }
}
// Stryker restore all

/** Sends `signal` to every process of the group; "gone" when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): "sent" | "gone" {
  assertSignalableGroup(pgid);
  try {
    process.kill(-pgid, signal);
    return "sent";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return "gone";
    throw new Error(`cannot send ${signal} to process group ${pgid}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * True while some process of the group still runs. Zombies do not count: they
 * have exited, and an orphaned one waits on whatever init reaps it, on its own schedule.
 */
export function groupIsAlive(pgid: number): boolean {
  assertSignalableGroup(pgid);
  if (probeGroup(pgid) === "gone") {
    lastSeenMember.delete(pgid);
    return false;
  }
  // Cheap first: the leader (its pid is the group's id), then the member found running last
  // time. Either still running in the group answers with one small read; only when both are
  // gone is the whole process table read (a stop polls every 25 ms, the table may be large).
  for (const pid of [pgid, lastSeenMember.get(pgid)]) {
    if (pid === undefined) continue;
    const stat = readProcStat(pid);
    if (isRunning(stat) && stat.pgid === pgid) return true;
  }
  const member = runningGroupMembers(pgid)[0];
  if (member) lastSeenMember.set(pgid, member.pid);
  else lastSeenMember.delete(pgid);
  return member !== undefined;
}

/** Per group, the pid of the member `groupIsAlive` last found running by reading the whole table. */
const lastSeenMember = new Map<number, number>();

function probeGroup(pgid: number): "present" | "gone" {
  try {
    process.kill(-pgid, 0);
    return "present";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return "gone";
    // EPERM: the group exists but is not ours to signal; it is still present.
    if (code === "EPERM") return "present";
    throw error;
  }
}

let ownPgid: number | undefined;

// Stryker disable all: see assertSignalableGroup
function ownProcessGroup(): number {
  ownPgid ??= readProcStat(process.pid)?.pgid ?? 0;
  return ownPgid;
}
// Stryker restore all
