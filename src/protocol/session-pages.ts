/** A page of `GET /api/sessions`: `nextCursor` on every page but the last. */
interface SessionsPage<T> {
  readonly sessions: T[];
  readonly nextCursor?: string;
}

/** The most sessions a page of `GET /api/sessions` may hold: a client wanting every one asks for the fewest pages. */
const WHOLE_LIST_PAGE = 1_000;

/**
 * Every session, following `GET /api/sessions`'s pages from the first: `get` answers one path (`base` with its query).
 * What the dashboard and the CLI show, each the whole list in an order of its own. A session active during the walk
 * moves to the first page, ahead of where the walk had come: the first pages are read again until one brings no
 * session the walk missed.
 */
export async function everySession<T extends { readonly id: string }>(base: string, get: (path: string) => Promise<SessionsPage<T>>): Promise<T[]> {
  const sessions = new Map<string, T>();
  const cursors = new Set<string>();
  const page = (cursor: string | undefined) => {
    if (cursor !== undefined && cursors.has(cursor)) throw new Error(`the session list gave the cursor ${JSON.stringify(cursor)} twice`);
    if (cursor !== undefined) cursors.add(cursor);
    return get(`${base}?limit=${WHOLE_LIST_PAGE}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`);
  };
  let cursor: string | undefined;
  do {
    const read = await page(cursor);
    for (const session of read.sessions) sessions.set(session.id, session);
    cursor = read.nextCursor;
  } while (cursor !== undefined);
  cursors.clear();
  do {
    const read = await page(cursor);
    const missed = read.sessions.some((session) => !sessions.has(session.id));
    for (const session of read.sessions) sessions.set(session.id, session);
    cursor = missed ? read.nextCursor : undefined;
  } while (cursor !== undefined);
  return [...sessions.values()];
}
