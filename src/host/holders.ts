import type { AgentChild } from "../agents/agent-child.js";
import type { HoldTicket, SessionHolds } from "../lifecycle/session-holds.js";

/** The holder that keeps a child that cannot be reloaded for as long as its location is retained. */
export const LOCATION_HOLDER = "berth:location";

/** Holders that are clients (connections, views, requests): not the host's own location holder, not turns. */
export function clientHolders(holds: { holderIds(sessionId: string): string[] }, sessionId: string): number {
  return holds.holderIds(sessionId).filter((id) => id !== LOCATION_HOLDER && !id.startsWith("turn:")).length;
}

/** Holds the session for `holderId`; `changed` runs when the hold starts, when its child is ready (or failed) and when it is released. */
export function holdAndTell(holds: SessionHolds<AgentChild>, sessionId: string, holderId: string, changed: () => void): HoldTicket<AgentChild> {
  const ticket = holds.hold(sessionId, holderId);
  changed();
  void ticket.child.then(changed, changed);
  return {
    get sessionId() {
      return ticket.sessionId;
    },
    holderId: ticket.holderId,
    incarnation: ticket.incarnation,
    get child() {
      return ticket.child;
    },
    isCurrent: () => ticket.isCurrent(),
    release: () => {
      const released = ticket.release();
      if (released) changed();
      return released;
    },
  };
}
