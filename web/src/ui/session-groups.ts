import type { SessionView } from "../api/types.js";

/** Sessions of one repository (a worktree session's) or one directory (a plain session's), for the sidebar. */
export interface SessionGroup {
  /** The repository's main checkout, or the plain sessions' directory. */
  readonly path: string;
  /** Its folder's name: what a person calls the project. */
  readonly name: string;
  readonly sessions: readonly SessionView[];
}

/**
 * A worktree session belongs to its repository, not to its worktree's folder; a plain session to its cwd (the view
 * does not say which checkout holds it). Groups come in the order of their most recent session, as the list is.
 */
export function groupByRepository(sessions: readonly SessionView[]): SessionGroup[] {
  const groups = new Map<string, SessionView[]>();
  for (const session of sessions) {
    const path = session.worktree?.repository ?? session.cwd;
    const group = groups.get(path);
    if (group) group.push(session);
    else groups.set(path, [session]);
  }
  return [...groups].map(([path, members]) => ({ path, name: folderName(path), sessions: members }));
}

/** The sessions as the list shows them, group after group: the order j and k step through. */
export function inListOrder(sessions: readonly SessionView[]): SessionView[] {
  return groupByRepository(sessions).flatMap((group) => group.sessions);
}

function folderName(path: string): string {
  return path.replace(/\/+$/, "").split("/").pop() || path;
}
