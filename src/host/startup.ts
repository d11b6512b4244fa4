import type { Clock } from "../lifecycle/clock.js";
import { reapLeftoverGroups, type ProcessGroupLedger } from "../processes/index.js";
import type { Store } from "../store/store.js";
import type { HostRecord } from "./host-records.js";
import type { Logger } from "./logger.js";

/**
 * After a restart: process groups a dead previous run left behind are reaped (one record
 * each), and questions whose agent process is gone are marked orphaned, not left pending
 * forever. Sessions need nothing: they are restored childless and listed from the journal.
 */
export async function restoreAfterRestart(deps: {
  store: Store;
  /** The process-group ledger, written through the host's one writer. */
  ledger: ProcessGroupLedger;
  exclusive: <T>(work: () => T) => T;
  clock: Clock;
  record: (record: HostRecord) => void;
  log: Logger;
  stopTimeoutMs: number;
}): Promise<void> {
  const { store, clock, record, log } = deps;
  for (const { record: group, outcome } of await reapLeftoverGroups(deps.ledger, { graceMs: deps.stopTimeoutMs })) {
    const described = outcome.kind === "stopped" ? `stopped (${outcome.stop})` : outcome.kind === "failed" ? `failed: ${outcome.error.message}` : outcome.kind;
    record({ kind: "group_reaped", pgid: group.pgid, label: group.label, outcome: described });
  }
  const orphaned = deps.exclusive(() => store.questions.orphanAllPending("the agent process that asked is gone (host restarted)", clock.now()));
  if (orphaned.length > 0) log.info({ questions: orphaned.map((q) => q.id) }, "pending questions orphaned after restart");
}
