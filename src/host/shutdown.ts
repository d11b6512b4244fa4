import { scopeOf } from "../processes/index.js";
import type { HostParts } from "./host-composition.js";

/** How long shutdown waits for interrupted turns to settle before it stops their agents anyway. */
const SHUTDOWN_SETTLE_MS = 5_000;

/**
 * The host's orderly end: it admits no new work, interrupts running turns with reason
 * `shutdown`, stops every child and location service as a process group, and closes the
 * journal and the store. Runs once; a second call returns at once.
 */
export async function shutDown(parts: HostParts): Promise<void> {
  const { status, retention, housekeeping, executions, holds, turns, store, children, transient, cache, journal, log } = parts;
  if (status.state !== "running") return;
  status.state = "stopping";
  retention.stop();
  housekeeping.stop();
  const interrupted = executions
    .active()
    .map((execution) => executions.interrupt(execution.sessionId, { reason: "shutdown", awaitSettlement: true }));
  let settleTimer: NodeJS.Timeout | undefined;
  const settleBound = new Promise((resolve) => (settleTimer = setTimeout(resolve, SHUTDOWN_SETTLE_MS)));
  await Promise.race([Promise.all(interrupted), settleBound]);
  clearTimeout(settleTimer);
  holds.close();
  turns.cancelSettleDeadlines();
  for (const session of store.sessions.list()) {
    if (holds.child(session.id)) parts.noticeAgentStopped(session.id, "shutdown");
  }
  await Promise.all([children.stopAll(), transient.stopAll()]);
  await cache.closeAll();
  // No child can start any more: whatever cgroup is left empty goes now.
  scopeOf(parts.ledger).deleteEmptyCgroups();
  await journal.close();
  store.close();
  status.state = "stopped";
  log.info({}, "host stopped");
}
