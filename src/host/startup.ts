import type { Clock } from "../lifecycle/clock.js";
import { attachScope, ProcessScope, reapLeftoverGroups, type ProcessGroupLedger } from "../processes/index.js";
import type { Question } from "../store/questions.js";
import type { Store } from "../store/store.js";
import { journalAbandoned } from "./abandoned-turns.js";
import type { HostRecord } from "./host-records.js";
import type { Journal } from "./journal.js";
import type { Logger } from "./logger.js";

/**
 * After a restart: process groups a dead previous run left behind are reaped (one record
 * each), then every process still carrying a marker of this data directory's scope or sitting
 * in one of its cgroups (a `setsid` daemon that left its group); from here on every child is
 * started in that scope. Questions whose agent process is gone are marked orphaned, not left pending
 * forever, and turns it left open are ended. Sessions need nothing else: they are restored childless and listed from
 * the journal.
 */
export async function restoreAfterRestart(deps: {
  store: Store;
  /** The data directory's scope ({@link ProcessScope.forDataDir}): what the previous run's children carry. */
  scope: ProcessScope;
  /** The process-group ledger, written through the host's one writer. */
  ledger: ProcessGroupLedger;
  journal: Journal;
  clock: Clock;
  record: (record: HostRecord) => void;
  log: Logger;
  stopTimeoutMs: number;
}): Promise<void> {
  const { store, scope, clock, record, log } = deps;
  await scope.probe();
  attachScope(deps.ledger, scope);
  logTracking(log, scope);
  for (const { entry: group, outcome } of await reapLeftoverGroups(deps.ledger, { graceMs: deps.stopTimeoutMs })) {
    const described =
      outcome.kind === "stopped" ? `stopped (${outcome.stop})` : outcome.kind === "failed" ? `failed: ${outcome.error.message}` : outcome.kind;
    record({ kind: "group_reaped", pgid: group.pgid, label: group.label, outcome: described });
  }
  const swept = await scope.reapAll({ graceMs: deps.stopTimeoutMs });
  if (swept.outcome !== "already-gone") {
    record({ kind: "group_reaped", pgid: 0, label: `processes marked ${scope.key}.* (left their groups)`, outcome: swept.outcome });
  }
  log.info(
    { scope: scope.key, cgroups: swept.cgroups, outcome: swept.outcome, ms: Math.round(swept.elapsedMs) },
    "leftover processes of this data directory swept",
  );
  // Nothing of this run has asked anything or started a turn yet: every pending question, every open turn is the
  // previous run's (or, in a fleet, an adopter's that stopped before it ended the dead owner's turn).
  const orphaned = store.questions.listPending();
  const unfinished = groupBySession(orphaned);
  const inTurn = store.events.sessionsInTurn();
  for (const sessionId of inTurn) if (!unfinished.has(sessionId)) unfinished.set(sessionId, []);
  if (unfinished.size === 0) return;
  if (orphaned.length > 0) log.info({ questions: orphaned.map((q) => q.id) }, "pending questions orphaned after restart");
  if (inTurn.length > 0) log.info({ sessions: inTurn }, "turns the previous run left open ended after restart");
  for (const [sessionId, questions] of unfinished) journalAbandoned(store, deps.journal, sessionId, questions, clock.now(), "restart");
  // Shown as orphaned from the first request on: wait (without blocking, at most `writeTimeout`) until it is stored.
  await deps.journal
    .within(deps.journal.committed(), "orphaning the previous run's questions", "they are orphaned once the store writes again")
    .catch((error: unknown) => log.error({ err: error }, "could not record orphaned questions yet"));
}

/** The start-up line that says how this host will find every descendant of its children (docs/security.md). */
function logTracking(log: Logger, scope: ProcessScope): void {
  const tracking = scope.tracking;
  if (tracking.mode === "cgroup") {
    log.info(
      { tracking: "cgroup", cgroups: tracking.directory, marker: "BERTH_GROUP" },
      "process tracking: a cgroup v2 per child, and the environment marker",
    );
  } else {
    log.info({ tracking: "marker", reason: tracking.reason, marker: "BERTH_GROUP" }, "process tracking: the environment marker only");
  }
}

function groupBySession(questions: readonly Question[]): Map<string, Question[]> {
  const bySession = new Map<string, Question[]>();
  for (const question of questions) bySession.set(question.sessionId, [...(bySession.get(question.sessionId) ?? []), question]);
  return bySession;
}

/**
 * After an orderly stop: each child's stop already followed its marker (and cgroup); this catches
 * whatever a child that was never stopped (it exited on its own) left running outside its group.
 */
export async function sweepLeftovers(dataDir: string, graceMs: number): Promise<string> {
  const scope = ProcessScope.forDataDir(dataDir);
  try {
    return (await scope.reapAll({ graceMs })).outcome;
  } finally {
    scope.deleteEmptyCgroups();
  }
}
