const unitMs = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** The longest wait `setTimeout` can honour (about 24.8 days). */
const maxDelayMs = 2 ** 31 - 1;

/**
 * Parses a duration such as `500ms`, `2s`, `3m` or `1h` into milliseconds.
 * Throws an error naming the bad spelling, so it can be shown to the user.
 */
export function parseDuration(spelled: string): number {
  const match = /^(\d+)(ms|s|m|h)$/.exec(spelled.trim());
  if (!match) {
    throw new Error(
      `invalid duration "${spelled}": expected a whole number followed by ms, s, m or h (e.g. 500ms, 2s, 3m, 1h)`,
    );
  }
  const [, amount, unit] = match as unknown as [string, string, keyof typeof unitMs];
  const ms = Number(amount) * unitMs[unit];
  if (ms > maxDelayMs) {
    throw new Error(`invalid duration "${spelled}": longer than the maximum of ${maxDelayMs}ms`);
  }
  return ms;
}
