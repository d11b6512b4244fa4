/** A page of `GET /api/sessions`: `nextCursor` on every page but the last. */
interface SessionsPage<T> {
  readonly sessions: T[];
  readonly nextCursor?: string;
}

/** The most sessions a page of `GET /api/sessions` may hold: a client wanting every one asks for the fewest pages. */
const WHOLE_LIST_PAGE = 1_000;

/**
 * Every session, following `GET /api/sessions`'s pages from the first: `get` answers one path (`base` with its query).
 * What the dashboard and the CLI show, each the whole list in an order of its own.
 */
export async function everySession<T>(base: string, get: (path: string) => Promise<SessionsPage<T>>): Promise<T[]> {
  const sessions: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await get(`${base}?limit=${WHOLE_LIST_PAGE}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`);
    sessions.push(...page.sessions);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return sessions;
}
