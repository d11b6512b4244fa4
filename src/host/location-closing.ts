import type { AgentChild } from "../agents/agent-child.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import type { CloseReason } from "../lifecycle/location-services-cache.js";
import type { SessionHolds } from "../lifecycle/session-holds.js";
import { closeLocationServices, type LocationServices } from "../location/location-services.js";
import type { Store } from "../store/store.js";
import type { AgentChildren } from "./agent-children.js";
import { LOCATION_HOLDER } from "./holders.js";
import { sessionsAt } from "./session-location.js";

export interface LocationClosingDeps {
  readonly store: Store;
  readonly holds: SessionHolds<AgentChild>;
  readonly children: AgentChildren;
  /** Tells the session's clients why its agent is stopped. */
  readonly noticeAgentStopped: (sessionId: string, reason: CloseReason) => void;
}

/** Eviction: the location's agent children, terminals, questions and services are stopped; each stop awaited. */
export async function closeLocation(deps: LocationClosingDeps, key: LocationKey, located: LocationServices, reason: CloseReason): Promise<void> {
  const { holds, children } = deps;
  const stops = sessionsAt(deps.store, key).map(async (session) => {
    holds.release(session.id, LOCATION_HOLDER);
    const child = holds.child(session.id);
    if (!child) return;
    deps.noticeAgentStopped(session.id, reason);
    holds.childLost(session.id, child);
    await children.stop(session.id, child, "evicted");
  });
  await Promise.allSettled(stops);
  await closeLocationServices(located, "location evicted");
}
