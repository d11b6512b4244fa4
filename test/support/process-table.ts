import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Whether `pid` still runs, judged from the process table: `kill(pid, 0)`
 * throwing ESRCH means gone. An exited orphan stays a zombie (state Z) until
 * init reaps it, on init's schedule; it runs nothing, so it counts as gone.
 */
export function processIsRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
  return stateOf(pid) !== "Z";
}

/** Polls until `condition` holds; fails naming `what` if it does not within `timeoutMs`. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

/** A process a test started, remembered with its start time so clean-up never hits a reused pid. */
export interface StartedProcess {
  readonly pid: number;
  readonly startTicks: string;
}

export function startedProcess(pid: number): StartedProcess {
  return { pid, startTicks: startTicksOf(pid) ?? "" };
}

/** Every running process whose process group is `pgid`, read from the process table. */
export function groupMembers(pgid: number): StartedProcess[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => fieldsAfterName(pid)?.[2] === String(pgid) && processIsRunning(pid))
    .map(startedProcess);
}

/**
 * SIGKILLs each process a failed test left running, and the members of its
 * group started after it (they outlive a leader that died), if each pid is
 * still the process it was. A pid that another process holds now means the
 * group died and its id was handed out again: that group is someone else's.
 */
export function killLeftovers(processes: Iterable<StartedProcess>): void {
  for (const started of processes) {
    if (started.startTicks === "") continue;
    const now = startTicksOf(started.pid);
    if (now !== undefined && now !== started.startTicks) continue;
    const after = Number(started.startTicks);
    const members = groupMembers(started.pid).filter((member) => Number(member.startTicks) >= after);
    for (const target of [started, ...members]) {
      if (startTicksOf(target.pid) !== target.startTicks || !processIsRunning(target.pid)) continue;
      try {
        process.kill(target.pid, "SIGKILL");
      } catch {
        // It exited meanwhile.
      }
    }
  }
}

function fieldsAfterName(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Field 3 of `/proc/<pid>/stat`. */
function stateOf(pid: number): string | undefined {
  return fieldsAfterName(pid)?.[0];
}

/** Field 22 of `/proc/<pid>/stat`. */
function startTicksOf(pid: number): string | undefined {
  return fieldsAfterName(pid)?.[19];
}

/** Every running descendant of `pid` (children, their children, …), read from the process table's parent links. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(fieldsAfterName(Number(entry))?.[1]);
    if (!Number.isFinite(parent)) continue;
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (!processIsRunning(child)) continue;
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The process group of a live `pid`, from `/proc/<pid>/stat`. */
export function processGroupOf(pid: number): number {
  return Number(fieldsAfterName(pid)?.[2]);
}

/** Waits until every pid is gone, or `boundMs` passed; returns the pids still running. */
export async function waitUntilGone(pids: readonly number[], boundMs = 5_000): Promise<number[]> {
  const deadline = Date.now() + boundMs;
  let running = pids.filter(processIsRunning);
  while (running.length > 0 && Date.now() < deadline) {
    await sleep(20);
    running = running.filter(processIsRunning);
  }
  return running;
}

/** A process's command line, its arguments joined by NUL; "" once it is gone. */
export function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** Every process of the machine (a daemon that left its group is found by its command line). */
export function allProcesses(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);
}
