/** Waits between reconnection attempts: 0.5 s, 1 s, 2 s, … up to 15 s, each ±20 % so many pages do not retry in step. */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(15_000, 500 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}
