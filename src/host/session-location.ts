import { locationKey, type LocationKey } from "../lifecycle/location-key.js";
import type { Session } from "../store/sessions.js";

/** Where a session works: its directory and workspace, as a location key. */
export function locationOf(session: Pick<Session, "cwd" | "workspace">): LocationKey {
  return locationKey(session.cwd, session.workspace);
}
