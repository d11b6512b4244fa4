import { afterEach, describe, expect, it } from "vitest";
import { seededRandom, testSeed } from "./test-seed.js";

const VARIABLE = "BERTH_TEST_SEED_CHECK";
afterEach(() => {
  delete process.env[VARIABLE];
});

const draws = (seed: number, count: number) => Array.from({ length: count }, seededRandom(seed));

describe("replayable random choices", () => {
  it("a seed gives the same sequence every time, another seed another one, all in [0, 1)", () => {
    expect(draws(42, 100)).toEqual(draws(42, 100));
    expect(draws(43, 100)).not.toEqual(draws(42, 100));
    const values = draws(7, 10_000);
    expect(values.every((value) => value >= 0 && value < 1)).toBe(true);
    // Spread over the interval, not stuck in a corner of it.
    expect(Math.min(...values)).toBeLessThan(0.01);
    expect(Math.max(...values)).toBeGreaterThan(0.99);
  });

  it("takes the seed from its variable when set, and draws one otherwise", () => {
    process.env[VARIABLE] = "123456789";
    expect(testSeed(VARIABLE)).toBe(123_456_789);
    delete process.env[VARIABLE];
    const drawn = testSeed(VARIABLE);
    expect(Number.isInteger(drawn) && drawn >= 0 && drawn < 2 ** 32).toBe(true);
  });

  it("refuses a variable that is not a whole number, naming it", () => {
    process.env[VARIABLE] = "0x1f";
    expect(() => testSeed(VARIABLE)).toThrow(`${VARIABLE} must be a whole number below 2^32 (a seed a failed run printed), got "0x1f"`);
    // One a seed cannot be: it would replay another.
    process.env[VARIABLE] = String(2 ** 32);
    expect(() => testSeed(VARIABLE)).toThrow(`got "${2 ** 32}"`);
  });
});
