import type { GroupRecord, ProcessGroupLedger } from "./ledger.js";
import { isRunning, readBootId, readProcStat, runningGroupMembers } from "./proc-stat.js";
import { stopGroup, type StopOptions, type StopOutcome } from "./stop-group.js";

/**
 * What start-up did with one recorded group of a previous run:
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
  readonly record: GroupRecord;
  readonly outcome: ReapOutcome;
}

/**
 * Reaps the process groups a previous run of the host recorded and left
 * behind. Only a leader with the recorded boot id and start ticks is the
 * process that was recorded; any other process under that pid is not ours and
 * is never signalled. Groups are stopped concurrently; one failure does not
 * stop the others, and this never throws for a single group.
 */
export async function reapLeftoverGroups(ledger: ProcessGroupLedger, options: StopOptions = {}): Promise<ReapedGroup[]> {
  return Promise.all(
    ledger.list().map(async (record) => {
      let outcome: ReapOutcome;
      try {
        outcome = await reapOne(record, options);
      } catch (error) {
        outcome = failed(error);
      }
      try {
        ledger.delete(record.pgid);
      } catch (error) {
        outcome = failed(error);
      }
      return { record, outcome };
    }),
  );
}

async function reapOne(record: GroupRecord, options: StopOptions): Promise<ReapOutcome> {
  if (record.bootId !== readBootId()) return { kind: "gone" };
  const leader = readProcStat(record.pgid);
  if (isRunning(leader)) {
    if (leader.startTicks !== record.startTicks) return { kind: "pid-reused" };
    return { kind: "stopped", stop: await stopGroup(record.pgid, options) };
  }
  // The leader died but members may remain (an MCP server behind `npx`, a `sleep &`). The kernel
  // never hands out a pid that is still some live group's id, so members of this group are ours.
  if (runningGroupMembers(record.pgid).length === 0) return { kind: "gone" };
  return { kind: "stopped", stop: await stopGroup(record.pgid, options) };
}

function failed(error: unknown): ReapOutcome {
  return { kind: "failed", error: error instanceof Error ? error : new Error(String(error)) };
}
