import { setTimeout as sleep } from "node:timers/promises";
import { cgroupMembers, cgroupPopulated, killCgroup, deleteCgroup } from "./cgroup.js";
import { assertSignalableGroup, groupIsAlive, signalGroup } from "./group-signals.js";
import { scanMarked, type MarkerMatch } from "./marker.js";
import { isRunning, readProcStat, runningGroupMembers } from "./proc-stat.js";

/** How a stop ended: the group left after the polite signal, had to be killed, or was gone already. */
export type StopOutcome = "exited" | "killed" | "already-gone";

export interface StopOptions {
  /** How long the group may take to leave after SIGTERM before it is killed (default 3 s). */
  readonly graceMs?: number;
  /** How often the group is probed while waiting (default 25 ms). */
  readonly pollMs?: number;
}

const DEFAULT_STOP_GRACE_MS = 3_000;
const DEFAULT_POLL_MS = 25;
/** Kill rounds after the grace: each kills what a fresh look finds, until a look finds nothing. */
const KILL_ROUNDS = 5;

/**
 * Everything that belongs to one started child, however it got away from its process group:
 * the group itself (while its id is still ours), the processes carrying its environment marker,
 * and the processes in its cgroups.
 */
export interface ProcessTree {
  /** Undefined once the group is known gone: its id may belong to someone else by now. */
  readonly pgid?: number;
  readonly marker?: MarkerMatch;
  readonly cgroups?: readonly string[];
}

/** Stops that are under way, so a second caller awaits the first instead of signalling again. */
const stopsInFlight = new Map<number, Promise<StopOutcome>>();

/**
 * Stops a whole process group: SIGTERM to the group, a bounded wait until no
 * process of it runs, then SIGKILL to the group and a second bounded wait.
 */
export function stopGroup(pgid: number, options: StopOptions = {}): Promise<StopOutcome> {
  return stopTree({ pgid }, options);
}

/**
 * Stops a whole tree: SIGTERM to the group and to every process found by its marker or in its
 * cgroups, a bounded wait, then SIGKILL (`cgroup.kill`, the group, each marked process) repeated
 * until a fresh look finds nothing, so a process forked or `setsid` meanwhile is caught too.
 * Empty cgroups are removed. A process is signalled only while its start time is the one seen.
 */
export function stopTree(tree: ProcessTree, options: StopOptions = {}): Promise<StopOutcome> {
  const key = tree.pgid;
  if (key !== undefined) {
    const inFlight = stopsInFlight.get(key);
    if (inFlight) return inFlight;
  }
  const stop = runStop(tree, options);
  if (key === undefined) return stop;
  const tracked = stop.finally(() => stopsInFlight.delete(key));
  stopsInFlight.set(key, tracked);
  return tracked;
}

/** pid → start ticks, so a pid the kernel handed to someone else meanwhile is never signalled. */
type Members = Map<number, number>;

async function runStop(tree: ProcessTree, options: StopOptions): Promise<StopOutcome> {
  const graceMs = options.graceMs ?? DEFAULT_STOP_GRACE_MS;
  // Stryker disable next-line LogicalOperator: an undefined poll interval polls every millisecond: only the time differs
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  if (tree.pgid !== undefined) assertSignalableGroup(tree.pgid);
  const found = members(tree);
  if (found.size === 0) {
    deleteCgroups(tree);
    return "already-gone";
  }
  if (tree.pgid !== undefined && groupIsAlive(tree.pgid)) signalGroup(tree.pgid, "SIGTERM");
  for (const [pid, ticks] of found) signalProcess(pid, ticks, "SIGTERM");
  let outcome: StopOutcome = (await waitUntilGone(tree, found, graceMs, pollMs)) ? "exited" : "killed";
  // Stryker disable next-line UpdateOperator,EqualityOperator: the rounds end when a look finds nothing; the bound matters only for a process SIGKILL cannot end (uninterruptible sleep)
  for (let round = 0; round < KILL_ROUNDS; round++) {
    // Never `cgroup.kill` a cgroup the host itself is in: a host started inside a tree a dead run of its scope left.
    // Stryker disable next-line ArrayDeclaration: `?? []` → a list with a path that is no cgroup: it has no members, and killing or removing it does nothing
    for (const cgroup of tree.cgroups ?? []) if (!cgroupMembers(cgroup).includes(process.pid)) killCgroup(cgroup);
    const rest = members(tree);
    if (rest.size === 0) break;
    outcome = "killed";
    if (tree.pgid !== undefined && groupIsAlive(tree.pgid)) signalGroup(tree.pgid, "SIGKILL");
    for (const [pid, ticks] of rest) signalProcess(pid, ticks, "SIGKILL");
    // SIGKILL cannot be refused, but a process in uninterruptible sleep leaves when the kernel lets it.
    await waitUntilGone(tree, rest, graceMs, pollMs);
  }
  await deleteCgroupsOnceEmpty(tree, graceMs, pollMs);
  return outcome;
}

/** Every running process of the tree now: group members, cgroup members, marked processes. */
function members(tree: ProcessTree): Members {
  const found: Members = new Map();
  if (tree.pgid !== undefined) for (const stat of runningGroupMembers(tree.pgid)) found.set(stat.pid, stat.startTicks);
  // Stryker disable next-line ArrayDeclaration: `?? []` → a list with a path that is no cgroup: it has no members, and killing or removing it does nothing
  for (const cgroup of tree.cgroups ?? []) {
    for (const pid of cgroupMembers(cgroup)) {
      const stat = readProcStat(pid);
      if (isRunning(stat)) found.set(pid, stat.startTicks);
    }
  }
  if (tree.marker) for (const stat of scanMarked(tree.marker).matches) found.set(stat.pid, stat.startTicks);
  found.delete(process.pid);
  return found;
}

/** Waits until none of `known` runs, the group is empty and the cgroups hold no running process. */
async function waitUntilGone(tree: ProcessTree, known: Members, timeoutMs: number, pollMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!anyRunning(tree, known)) return true;
    // Stryker disable next-line EqualityOperator: only the time differs: the wait ends when the tree is gone
    if (Date.now() >= deadline) return false;
    // Stryker disable next-line MethodExpression,ArithmeticOperator: only the time differs: the wait ends when the tree is gone
    await sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())));
  }
}

function anyRunning(tree: ProcessTree, known: Members): boolean {
  for (const [pid, ticks] of known) if (sameProcessRunning(pid, ticks)) return true;
  if (tree.pgid !== undefined && groupIsAlive(tree.pgid)) return true;
  // Stryker disable next-line ArrayDeclaration: `?? []` → a list with a path that is no cgroup: it has no members, and killing or removing it does nothing
  for (const cgroup of tree.cgroups ?? []) if (cgroupMembers(cgroup).some((pid) => isRunning(readProcStat(pid)))) return true;
  return false;
}

function sameProcessRunning(pid: number, ticks: number): boolean {
  const stat = readProcStat(pid);
  return isRunning(stat) && stat.startTicks === ticks;
}

function signalProcess(pid: number, ticks: number, signal: NodeJS.Signals): void {
  // Stryker disable next-line all: a mutant here signals init or the host itself (docs/lifecycle.md, "Mutation testing")
  if (pid <= 1 || pid === process.pid || !sameProcessRunning(pid, ticks)) return;
  try {
    process.kill(pid, signal);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ESRCH" && code !== "EPERM") throw error;
  }
}

function deleteCgroups(tree: ProcessTree): void {
  // Stryker disable next-line ArrayDeclaration: `?? []` → a list with a path that is no cgroup: it has no members, and killing or removing it does nothing
  for (const cgroup of tree.cgroups ?? []) deleteCgroup(cgroup);
}

/**
 * A killed process still counts as a member (`populated 1`, and `rmdir` fails) until its parent
 * reaps it, though it is listed nowhere: an orphan waits on init. So the cgroups are removed once
 * empty, within a bounded wait; one still busy then is left to the next sweep.
 */
async function deleteCgroupsOnceEmpty(tree: ProcessTree, timeoutMs: number, pollMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // Stryker disable next-line ArrayDeclaration: `?? []` → a list with a path that is no cgroup: it has no members, and killing or removing it does nothing
  while ((tree.cgroups ?? []).some(cgroupPopulated) && Date.now() < deadline) await sleep(pollMs);
  deleteCgroups(tree);
}
