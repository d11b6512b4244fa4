import type { LedgerEntry, ProcessGroupLedger } from "./ledger.js";
import { isRunning, readBootId, readProcStat, runningGroupMembers } from "./proc-stat.js";
import { stopGroup, type StopOptions, type StopOutcome } from "./stop-group.js";

/**
 * What start-up did with one group a previous run left in the ledger:
 * - `stopped`: its leader still ran, so the group was stopped;
 * - `gone`: nothing runs under its pid any more;
 * - `pid-reused`: another process (or another boot) owns the pid now, so it was left alone;
 * - `failed`: stopping it or deleting it from the ledger threw.
 * It is deleted from the ledger in every case.
 */
type ReapOutcome =
  | { readonly kind: "stopped"; readonly stop: StopOutcome }
  | { readonly kind: "gone" }
  | { readonly kind: "pid-reused" }
  | { readonly kind: "failed"; readonly error: Error };

export interface ReapedGroup {
  readonly entry: LedgerEntry;
  readonly outcome: ReapOutcome;
}

/**
 * Reaps the process groups a previous run of the host added to the ledger and left
 * behind. Only a leader with the ledger's boot id and start ticks is the
 * process that was added; any other process under that pid is not ours and
 * is never signalled. Groups are stopped concurrently; one failure does not
 * stop the others, and this never throws for a single group.
 */
export async function reapLeftoverGroups(ledger: ProcessGroupLedger, options: StopOptions = {}): Promise<ReapedGroup[]> {
  return Promise.all(
    ledger.list().map(async (group) => {
      let outcome: ReapOutcome;
      try {
        outcome = await reapOne(group, options);
      } catch (error) {
        outcome = failed(error);
      }
      try {
        ledger.delete(group.pgid);
      } catch (error) {
        outcome = failed(error);
      }
      return { entry: group, outcome };
    }),
  );
}

async function reapOne(group: LedgerEntry, options: StopOptions): Promise<ReapOutcome> {
  if (group.bootId !== readBootId()) return { kind: "gone" };
  const leader = readProcStat(group.pgid);
  if (isRunning(leader)) {
    if (leader.startTicks !== group.startTicks) return { kind: "pid-reused" };
    return { kind: "stopped", stop: await stopGroup(group.pgid, options) };
  }
  // The leader died but members may remain (an MCP server behind `npx`, a `sleep &`). The kernel
  // never hands out a pid that is still some live group's id, so members of this group are ours.
  if (runningGroupMembers(group.pgid).length === 0) return { kind: "gone" };
  return { kind: "stopped", stop: await stopGroup(group.pgid, options) };
}

function failed(error: unknown): ReapOutcome {
  return { kind: "failed", error: error instanceof Error ? error : new Error(String(error)) };
}
