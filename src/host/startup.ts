import type { Clock } from "../lifecycle/clock.js";
import { dirname } from "node:path";
import { attachScope, ProcessScope, reapLeftoverGroups, type ProcessGroupLedger } from "../processes/index.js";
import type { Question } from "../store/questions.js";
import type { Store } from "../store/store.js";
import type { HostRecord } from "./host-records.js";
import type { Journal } from "./journal.js";
import { locationOf } from "./session-location.js";
import { callOp } from "../store/write-batch.js";
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
  /** The process-group ledger, written through the host's one writer. */
  ledger: ProcessGroupLedger;
  journal: Journal;
  clock: Clock;
  record: (record: HostRecord) => void;
  log: Logger;
  stopTimeoutMs: number;
}): Promise<void> {
  const { store, clock, record, log } = deps;
  // The store lives in the data directory; its scope is what the previous run's children carry.
  const scope = ProcessScope.forDataDir(dirname(store.path));
  attachScope(deps.ledger, scope);
  logTracking(log, scope);
  for (const { record: group, outcome } of await reapLeftoverGroups(deps.ledger, { graceMs: deps.stopTimeoutMs })) {
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
  // Nothing of this run has asked anything yet: every pending question is the previous run's.
  const orphaned = store.questions.listPending();
  if (orphaned.length === 0) return;
  log.info({ questions: orphaned.map((q) => q.id) }, "pending questions orphaned after restart");
  for (const [sessionId, questions] of groupBySession(orphaned)) journalOrphans(store, deps.journal, sessionId, questions, clock.now());
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

const ORPHAN_REASON = "the agent process that asked is gone (host restarted)";

/**
 * What a client sees of questions a dead host left pending, the next time the session is loaded:
 * each question resolved `orphaned`, the turn that asked it ended (it cannot go on: its agent
 * process is gone), and a notice in the transcript, "the agent stopped before you answered",
 * whose `_meta["berth/notice"].rerun` carries that turn's prompt so a client can offer to send
 * it again. Each question's new state is stored with its event.
 */
function journalOrphans(store: Store, journal: Journal, sessionId: string, questions: readonly Question[], at: number): void {
  const session = store.sessions.get(sessionId);
  if (!session) return;
  const key = locationOf(session);
  let openPrompt: unknown;
  for (const event of store.events.replay(sessionId)) {
    if (event.kind === "turn_started") openPrompt = (event.payload as { prompt?: unknown }).prompt;
    else if (event.kind === "turn_ended") openPrompt = undefined;
  }
  for (const question of questions) {
    journal.append(
      sessionId,
      key,
      "question_resolved",
      { questionId: question.id, state: "orphaned", reason: ORPHAN_REASON },
      { with: [callOp("questions.resolve", [question.id, "orphaned", ORPHAN_REASON, at])] },
    );
  }
  if (openPrompt !== undefined) journal.append(sessionId, key, "turn_ended", { stopReason: null, error: "the host stopped during the turn" });
  const asked = questions.map(describeQuestion).join("; ");
  const again = openPrompt === undefined ? "" : " Send your last prompt again to re-run the turn.";
  const text = `The agent stopped before you answered (${asked}): Berth was stopped abruptly, and the agent process that asked is gone, so an answer can no longer reach it.${again}`;
  const notice = {
    kind: "question_orphaned",
    questionIds: questions.map((question) => question.id),
    ...(openPrompt === undefined ? {} : { rerun: { prompt: openPrompt } }),
  };
  const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n${text}\n` }, _meta: { "berth/notice": notice } };
  journal.append(sessionId, key, "update", { update });
}

function describeQuestion(question: Question): string {
  const request = (question.request ?? {}) as { toolCall?: { title?: unknown }; message?: unknown };
  const title = question.kind === "permission" ? request.toolCall?.title : request.message;
  return typeof title === "string" && title.length > 0
    ? `"${title.length > 80 ? `${title.slice(0, 77)}...` : title}"`
    : `a ${question.kind} question`;
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
