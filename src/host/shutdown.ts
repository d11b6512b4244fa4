import { SHUTDOWN_SETTLE_MS } from "../config/stop-timings.js";
import { scopeOf } from "../processes/index.js";
import type { HostParts } from "./host-composition.js";
import { OrderlySteps } from "./orderly-steps.js";

export interface ShutdownOptions {
  /** Stops the agents' terminal logins: a step like the others, so a failure is logged and the rest still runs. */
  readonly stopLogins?: () => Promise<void>;
  /**
   * Runs once every turn has ended and every child is stopped, before the journal and the store close: the server
   * answers its clients and closes their connections here, so no request of theirs reaches a closed store.
   */
  readonly beforeClose?: () => Promise<void>;
}

/** Some steps of the shutdown failed (each logged as it failed); every other step ran, and the store is closed. */
class ShutdownIncompleteError extends Error {
  override readonly name = "ShutdownIncompleteError";
  constructor(readonly failedSteps: readonly string[]) {
    super(`the host stopped, but these shutdown steps failed: ${failedSteps.join(", ")}`);
  }
}

/**
 * The host's orderly end: it admits no new work, interrupts running turns with reason
 * `shutdown`, stops every child and location service as a process group, lets `beforeClose`
 * run, and closes the journal and the store. Each step runs whatever happened to the one before
 * it (a failure is logged, then reported at the end by {@link ShutdownIncompleteError}).
 * Runs once; a second call returns at once.
 */
export async function shutDown(parts: HostParts, options: ShutdownOptions = {}): Promise<void> {
  const { status, retention, housekeeping, holds, turns, store, children, transient, cache, journal, log } = parts;
  if (status.state !== "running") return;
  status.state = "stopping";
  const steps = new OrderlySteps(log, "shutdown step failed");
  await steps.run("stop sweeps", () => {
    retention.stop();
    housekeeping.stop();
  });
  if (options.stopLogins) await steps.run("stop logins", options.stopLogins);
  await steps.run("interrupt turns", () => interruptTurns(parts));
  await steps.run("close holds", () => {
    holds.close();
    turns.cancelSettleDeadlines();
  });
  await steps.run("tell held sessions", () => {
    for (const session of store.sessions.list()) {
      if (holds.child(session.id)) parts.noticeAgentStopped(session.id, "shutdown");
    }
  });
  await steps.run("stop agents", () => Promise.all([children.stopAll(), transient.stopAll()]));
  await steps.run("close locations", () => cache.closeAll());
  // No child can start any more: whatever cgroup is left empty goes now.
  await steps.run("delete empty cgroups", () => scopeOf(parts.ledger).deleteEmptyCgroups());
  if (options.beforeClose) await steps.run("close clients", options.beforeClose);
  await steps.run("close journal", () => journal.close());
  await steps.run("close store", () => store.close());
  status.state = "stopped";
  const { failed } = steps;
  log.info(failed.length > 0 ? { failedSteps: failed } : {}, "host stopped");
  if (failed.length > 0) throw new ShutdownIncompleteError(failed);
}

/**
 * Interrupts every running turn and waits (at most {@link SHUTDOWN_SETTLE_MS}) for them to settle. A turn that cannot
 * be interrupted is logged, whenever that is known: no promise of it is left unhandled, even after the wait ended.
 */
async function interruptTurns({ executions, log }: HostParts): Promise<void> {
  const interrupted = executions
    .active()
    .map((execution) =>
      executions
        .interrupt(execution.sessionId, { reason: "shutdown", awaitSettlement: true })
        .catch((error: unknown) => log.error({ err: error, sessionId: execution.sessionId }, "interrupting a turn at shutdown failed")),
    );
  let settleTimer: NodeJS.Timeout | undefined;
  const settleBound = new Promise<void>((resolve) => (settleTimer = setTimeout(resolve, SHUTDOWN_SETTLE_MS)));
  await Promise.race([Promise.all(interrupted), settleBound]);
  clearTimeout(settleTimer);
}
