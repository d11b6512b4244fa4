import type { AgentChild } from "../agents/agent-child.js";
import type { Config } from "../config/config-schema.js";
import { formatDuration } from "../config/durations.js";
import type { CloseReason } from "../lifecycle/location-services-cache.js";
import type { SessionHolds } from "../lifecycle/session-holds.js";
import type { Store } from "../store/store.js";
import { clientHolders } from "./holders.js";
import type { Journal } from "./journal.js";
import type { Logger } from "./logger.js";
import { locationOfSession } from "./session-location.js";

export type AgentStopReason = CloseReason | "unresponsive";

export interface AgentStopNoticeDeps {
  readonly config: Pick<Config, "idleTtl" | "maxActiveHold" | "interruptTimeout">;
  readonly store: Store;
  readonly journal: Journal;
  readonly holds: SessionHolds<AgentChild>;
  readonly log: Logger;
}

/**
 * A held session's agent is being stopped while clients still hold it: every client sees why,
 * in the conversation itself. Nothing is stopped silently.
 */
export function noticeAgentStopped(deps: AgentStopNoticeDeps, sessionId: string, reason: AgentStopReason): void {
  if (clientHolders(deps.holds, sessionId) === 0) return;
  const key = locationOfSession(deps.store, sessionId);
  if (!key) return;
  const { config } = deps;
  const why = {
    idle: `its location was idle for ${formatDuration(config.idleTtl)} and evictHeld is on`,
    inactivity: `nothing was recorded at its location for ${formatDuration(config.maxActiveHold)}, the longest a location is kept without progress`,
    shutdown: "the host is shutting down",
    unresponsive: `it did not end its interrupted turn within ${formatDuration(config.interruptTimeout)}`,
  }[reason];
  try {
    deps.journal.notice(
      sessionId,
      key,
      `Berth stopped this session's agent (reason: ${reason}): ${why}. The conversation is kept; the next prompt starts the agent again.`,
      {
        kind: "agent_stopped",
        reason,
      },
    );
  } catch (error) {
    deps.log.error({ err: error, sessionId }, "agent stop notice failed");
  }
}
