import { randomUUID } from "node:crypto";
import { announcementOf, announces, stateOf, withRequest } from "./agent-session-state.js";
import { locationOf } from "./session-location.js";
import type { HostParts } from "./host-composition.js";

type RequestParts = Pick<HostParts, "holds" | "store" | "journal">;

/**
 * A request for the session's agent that Berth does not handle itself (a mode, a model, a config
 * option, an extension method): the session is held while it runs, so a stopped child comes
 * back; the answer and any error come back unchanged, and what it changed is kept (and announced, see below).
 */
export async function forwardToAgent(
  parts: RequestParts,
  sessionId: string,
  method: string,
  params: unknown,
  { signal, requester }: ForwardOptions = {},
): Promise<unknown> {
  const { holds, store, journal } = parts;
  const ticket = holds.hold(sessionId, `request:${randomUUID()}`);
  try {
    const child = await ticket.child;
    // The agent's updates come in order before its answer: those it sent for this request are heard by then.
    const heard: unknown[] = [];
    const stopHearing = child.onUpdate((update) => heard.push(update));
    const result = await child.request(method, params, signal).finally(stopHearing);
    const session = store.sessions.get(sessionId);
    if (!session) return result;
    const next = withRequest(stateOf(session.agentState), method, params, result);
    if (next) journal.setSession(sessionId, { agentState: next });
    // An agent that announces nothing (opencode) leaves the session's other clients showing the old mode: Berth tells them.
    const announcement = announcementOf(method, params, result);
    if (announcement && !heard.some((update) => announces(update, announcement)))
      journal.announce(sessionId, locationOf(session), announcement, requester);
    return result;
  } finally {
    ticket.release();
  }
}

export interface ForwardOptions {
  readonly signal?: AbortSignal;
  /** The holder whose request it is: the update Berth announces for it is not sent back to it, which the agent told nothing. */
  readonly requester?: string;
}

/** A notification for the session's agent (an extension): passed on if it has a child, else dropped (false). */
export function notifyAgent(parts: Pick<HostParts, "holds">, sessionId: string, method: string, params: unknown): boolean {
  const child = parts.holds.child(sessionId);
  if (!child) return false;
  void child.notify(method, params);
  return true;
}
