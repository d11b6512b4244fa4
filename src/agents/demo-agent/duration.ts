import { parseDuration as parseHumanDuration } from "../../config/durations.js";

/** The longest wait `setTimeout` can honour (about 24.8 days). */
const maxDelayMs = 2 ** 31 - 1;

/**
 * Parses a duration such as `500ms`, `2s`, `3m` or `1h` into milliseconds.
 * Throws an error naming the bad spelling, so it can be shown to the user.
 */
export function parseDuration(spelled: string): number {
  const ms = parseHumanDuration(spelled);
  if (ms === undefined) {
    throw new Error(`invalid duration "${spelled}": expected a number followed by ms, s, m, h or d (e.g. 500ms, 2s, 3m, 1h)`);
  }
  if (ms > maxDelayMs) throw new Error(`invalid duration "${spelled}": longer than the maximum of ${maxDelayMs}ms`);
  return ms;
}
