import type { Clock } from "../lifecycle/clock.js";
import { dirname } from "node:path";
import { attachScope, ProcessScope, reapLeftoverGroups } from "../processes/index.js";
import type { Store } from "../store/store.js";
import type { HostRecord } from "./host-records.js";
import type { Logger } from "./logger.js";

/**
 * After a restart: process groups a dead previous run left behind are reaped (one record
 * each), then every process still carrying a marker of this data directory's scope or sitting
 * in one of its cgroups (a `setsid` daemon that left its group); from here on every child is
 * started in that scope. Questions whose agent process is gone are marked orphaned, not left pending
 * forever. Sessions need nothing: they are restored childless and listed from the journal.
 */
export async function restoreAfterRestart(deps: {
  store: Store;
  clock: Clock;
  record: (record: HostRecord) => void;
  log: Logger;
  stopTimeoutMs: number;
}): Promise<void> {
  const { store, clock, record, log } = deps;
  // The store lives in the data directory; its scope is what the previous run's children carry.
  const scope = ProcessScope.forDataDir(dirname(store.path));
  attachScope(store.processGroups, scope);
  for (const { record: group, outcome } of await reapLeftoverGroups(store.processGroups, { graceMs: deps.stopTimeoutMs })) {
    const described = outcome.kind === "stopped" ? `stopped (${outcome.stop})` : outcome.kind === "failed" ? `failed: ${outcome.error.message}` : outcome.kind;
    record({ kind: "group_reaped", pgid: group.pgid, label: group.label, outcome: described });
  }
  const swept = await scope.reapAll({ graceMs: deps.stopTimeoutMs });
  if (swept.outcome !== "already-gone") {
    record({ kind: "group_reaped", pgid: 0, label: `processes marked ${scope.key}.* (left their groups)`, outcome: swept.outcome });
  }
  log.info(
    { scope: scope.key, cgroups: scope.cgroupDirectory ?? "unavailable", outcome: swept.outcome, ms: Math.round(swept.elapsedMs) },
    "leftover processes of this data directory swept",
  );
  const orphaned = store.questions.orphanAllPending("the agent process that asked is gone (host restarted)", clock.now());
  if (orphaned.length > 0) log.info({ questions: orphaned.map((q) => q.id) }, "pending questions orphaned after restart");
}
