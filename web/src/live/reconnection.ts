/**
 * Where a page stands with a connection it keeps to Berth (the chat's, the overview's event stream):
 *
 * - `connected`: the last attempt really worked (the session was held, the journal read, the stream
 *   opened); the next loss starts again from the first delay.
 * - `waiting`: lost `since`; attempt `attempt` is due at `retryAt`.
 * - `trying`: attempt `attempt` is under way; if it fails, the next waits twice as long.
 */
export type Reconnection =
  | { readonly name: "connected" }
  | { readonly name: "waiting"; readonly attempt: number; readonly retryAt: number; readonly since: number; readonly reason: string }
  | { readonly name: "trying"; readonly attempt: number; readonly since: number; readonly reason: string };

export const connected: Reconnection = { name: "connected" };

type Waiting = Extract<Reconnection, { name: "waiting" }>;

/** Waits between reconnection attempts: 0.5 s, 1 s, 2 s, … up to 15 s, each ±20 % so many pages do not retry in step. */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(15_000, 500 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/**
 * The connection was lost, or an attempt failed: the next attempt and when it is due. A second report
 * while already waiting (a socket's close and its request's failure both tell of one loss) changes nothing.
 */
export function lostConnection(state: Reconnection, reason: string, now: number, random: () => number = Math.random): Waiting {
  switch (state.name) {
    case "waiting":
      return state;
    case "connected":
      return { name: "waiting", attempt: 1, retryAt: now + reconnectDelay(1, random), since: now, reason };
    case "trying": {
      const attempt = state.attempt + 1;
      return { name: "waiting", attempt, retryAt: now + reconnectDelay(attempt, random), since: state.since, reason };
    }
  }
}

/** The attempt that was waiting starts (its time came, the browser came back online, or the person asked). */
export function attemptStarted(state: Reconnection): Reconnection {
  return state.name === "waiting" ? { name: "trying", attempt: state.attempt, since: state.since, reason: state.reason } : state;
}

/** When what the page shows of Berth was last known to be current: null while connected. */
export function lostSince(state: Reconnection): number | null {
  return state.name === "connected" ? null : state.since;
}
