import { locationKey, type LocationKey } from "../lifecycle/location-key.js";
import type { Session } from "../store/sessions.js";
import type { Store } from "../store/store.js";

/** Where a session works: its directory and workspace, as a location key. */
export function locationOf(session: Pick<Session, "cwd" | "workspace">): LocationKey {
  return locationKey(session.cwd, session.workspace);
}

/** The location of a stored session; undefined if there is no such session. */
export function locationOfSession(store: Store, sessionId: string): LocationKey | undefined {
  const session = store.sessions.get(sessionId);
  return session && locationOf(session);
}

/** Every stored session that works at `key`. */
export function sessionsAt(store: Store, key: LocationKey): Session[] {
  return store.sessions.list({ cwd: key.directory }).filter((session) => locationOf(session).id === key.id);
}
