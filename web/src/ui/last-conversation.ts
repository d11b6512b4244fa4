import type { SessionView } from "../api/types.js";
import { SESSIONS_HREF, sessionHref } from "./route.js";

const LAST_KEY = "berth.lastSession";

/** The conversation last open in this browser: the root address opens it again. */
export function rememberConversation(sessionId: string): void {
  try {
    window.localStorage.setItem(LAST_KEY, sessionId);
  } catch {
    // Storage refused (a private window's quota): the root opens the newest session instead.
  }
}

/** Where the root address leads: the last conversation if it still exists, else the newest session, else the list (empty). */
export function rootTarget(sessions: readonly SessionView[]): string {
  let last: string | null = null;
  try {
    last = window.localStorage.getItem(LAST_KEY);
  } catch {
    last = null;
  }
  const session = sessions.find((s) => s.id === last) ?? sessions[0];
  return session ? sessionHref(session.id) : SESSIONS_HREF;
}
