import { onTestFailed } from "vitest";

/**
 * The seed of a test's random choices: from the environment variable `name` when set (to replay a failure),
 * otherwise drawn. Call it inside the test: if the test fails, the seed is printed with the variable that replays it.
 * Only the choices replay; the moments at which processes and sockets act are the machine's.
 */
export function testSeed(name: string): number {
  const given = process.env[name];
  if (given !== undefined && (!/^\d+$/.test(given) || Number(given) >= 2 ** 32))
    throw new Error(`${name} must be a whole number below 2^32 (a seed a failed run printed), got ${JSON.stringify(given)}`);
  const seed = given === undefined ? Math.floor(Math.random() * 2 ** 32) : Number(given);
  onTestFailed(() => {
    console.error(`Random choices of this run came from seed ${seed}: replay them with ${name}=${seed}`);
  });
  return seed;
}

/** A random number in [0, 1) after another, the same sequence for the same seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
