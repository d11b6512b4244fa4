import { readFileSync } from "node:fs";

/**
 * True once `pid` has left the process table. A zombie counts as gone: it has
 * exited and only waits for whoever inherited it to reap it.
 */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return true;
    throw error;
  }
  return processState(pid) === "Z";
}

/** The process group of a live `pid`, from `/proc/<pid>/stat`. */
export function processGroupOf(pid: number): number {
  return Number(statFields(pid)[2]);
}

/** Waits until every pid is gone, or `boundMs` passed; returns the pids still alive. */
export async function waitUntilGone(pids: readonly number[], boundMs = 5_000): Promise<number[]> {
  const deadline = Date.now() + boundMs;
  let alive = pids.filter((pid) => !isGone(pid));
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    alive = alive.filter((pid) => !isGone(pid));
  }
  return alive;
}

function processState(pid: number): string | undefined {
  try {
    return statFields(pid)[0];
  } catch {
    return undefined;
  }
}

/** The fields after the command name in `/proc/<pid>/stat` (state, ppid, pgrp, ...). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}
