import { randomUUID } from "node:crypto";
import { stateOf, withRequest } from "./agent-session-state.js";
import type { HostParts } from "./host-composition.js";

type RequestParts = Pick<HostParts, "holds" | "store" | "journal">;

/**
 * A request for the session's agent that Berth does not handle itself (a mode, a model, a config
 * option, an extension method): the session is held while it runs, so a released child comes
 * back; the answer and any error come back unchanged, and what it changed is kept.
 */
export async function forwardToAgent(
  parts: RequestParts,
  sessionId: string,
  method: string,
  params: unknown,
  signal?: AbortSignal,
): Promise<unknown> {
  const { holds, store, journal } = parts;
  const ticket = holds.hold(sessionId, `request:${randomUUID()}`);
  try {
    const child = await ticket.child;
    const result = await child.request(method, params, signal);
    const session = store.sessions.get(sessionId);
    const next = session && withRequest(stateOf(session.agentState), method, params, result);
    if (next) journal.setSession(sessionId, { agentState: next });
    return result;
  } finally {
    ticket.release();
  }
}

/** A notification for the session's agent (an extension): passed on if it has a child, else dropped (false). */
export function notifyAgent(parts: Pick<HostParts, "holds">, sessionId: string, method: string, params: unknown): boolean {
  const child = parts.holds.child(sessionId);
  if (!child) return false;
  void child.notify(method, params);
  return true;
}
