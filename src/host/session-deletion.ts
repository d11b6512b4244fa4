import type { ChildStopReason } from "./agent-children.js";
import type { HostParts } from "./host-composition.js";

type DeletionParts = Pick<HostParts, "executions" | "desk" | "holds" | "children" | "journal" | "store" | "records">;

/** Releases every hold of a session this host stops serving and stops its agent, one that is still starting included. */
export async function stopSessionAgent(parts: Pick<HostParts, "holds" | "children">, sessionId: string, why: ChildStopReason): Promise<void> {
  const { holds, children } = parts;
  holds.releaseAll(sessionId);
  // A child still starting would otherwise come up for a session this host no longer serves.
  await children.whenAcquired(sessionId);
  const child = holds.child(sessionId);
  if (child) {
    holds.childLost(sessionId, child);
    await children.stop(sessionId, child, why);
  }
}

/**
 * Closes and deletes a session (the caller checked it exists): its turn is interrupted, its
 * questions cancelled, its child stopped, its journal removed, and a `session_deleted` record
 * tells every view, however the deletion was asked for.
 */
export async function deleteSession(parts: DeletionParts, sessionId: string): Promise<void> {
  const { executions, desk, children, journal } = parts;
  await executions.interrupt(sessionId, { reason: "user", awaitSettlement: true });
  desk.cancelForSession(sessionId, "session deleted");
  await stopSessionAgent(parts, sessionId, "deleted");
  // Whenever it is stored (later, if the store cannot write now), the session is forgotten and its deletion recorded.
  const deleted = journal.call("sessions.delete", [sessionId], sessionId).then(() => {
    journal.forget(sessionId);
    children.forget(sessionId);
    parts.records.record({ kind: "session_deleted", sessionId });
  });
  await journal.within(deleted, "the deletion", "it stays queued and is done once the store writes again");
}
