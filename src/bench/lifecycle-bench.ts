import { systemClock } from "../lifecycle/clock.js";
import { Executions } from "../lifecycle/executions.js";
import { locationKey } from "../lifecycle/location-key.js";
import { LocationRetention } from "../lifecycle/location-retention.js";
import { LocationServicesCache } from "../lifecycle/location-services-cache.js";
import { SessionHolds } from "../lifecycle/session-holds.js";
import { VirtualClock } from "../lifecycle/virtual-clock.js";
import { fmt, opsPerSecond, percentile, sampleMs, table } from "./measure.js";

const HOUR = 3_600_000;

async function retentionWith(locations: number, active: number) {
  const clock = new VirtualClock(0);
  const executions = new Executions(clock);
  const cache = new LocationServicesCache<object>({ boot: async () => ({}), close: async () => undefined });
  const retention = new LocationRetention<object>({
    clock,
    executions,
    cache,
    idleTtlMs: HOUR,
    maxActiveHoldMs: 24 * HOUR,
    sweepIntervalMs: 60_000,
    cancelPendingQuestions: () => undefined,
    record: () => undefined,
  });
  const keys = Array.from({ length: locations }, (_, i) => locationKey(`/work/project-${i}`));
  await Promise.all(keys.map((key) => retention.open(key)));
  for (let i = 0; i < active; i++) executions.begin(`session-${i}`, keys[i * (locations / active)]!, () => undefined);
  return { retention, keys };
}

async function sweepFigures(): Promise<Array<[string, string, string?]>> {
  const { retention } = await retentionWith(100_000, 10_000);
  for (let i = 0; i < 5; i++) retention.sweep();
  const samples = sampleMs(200, () => retention.sweep());
  return [
    ["sweep, 100k locations / 10k active: median", fmt.ms(percentile(samples, 50)), "≤ 10 ms"],
    ["sweep, 100k locations / 10k active: p99", fmt.ms(percentile(samples, 99))],
  ];
}

async function touchFigures(): Promise<Array<[string, string, string?]>> {
  const { retention, keys } = await retentionWith(100_000, 10_000);
  const streaming = keys.slice(0, 100);
  const hot = opsPerSecond(100_000, () => {
    for (let i = 0; i < 1_000; i++) for (const key of streaming) retention.touch(key);
  });
  const spread = opsPerSecond(keys.length, () => {
    for (const key of keys) retention.touch(key);
  });
  return [
    ["durable-event touches (100 streaming locations)", `${fmt.int(hot)}/s`, "≥ 5,000,000/s"],
    ["durable-event touches (round-robin over all 100k)", `${fmt.int(spread)}/s`],
  ];
}

function holdsWithLiveChildren(sessions: number) {
  const holds = new SessionHolds<object>({
    clock: systemClock,
    releaseGraceMs: 15_000,
    turns: new Executions(systemClock),
    acquire: async () => ({}),
    stop: async () => undefined,
  });
  for (let i = 0; i < sessions; i++) holds.hold(`session-${i}`, "anchor");
  return holds;
}

async function holdFigures(): Promise<Array<[string, string, string?]>> {
  const sessions = 10_000;
  const ids = Array.from({ length: sessions }, (_, i) => `session-${i}`);
  const holds = holdsWithLiveChildren(sessions);
  await new Promise((resolve) => setImmediate(resolve));
  const withAnchor = opsPerSecond(sessions, () => {
    for (const id of ids) holds.hold(id, "visitor").release();
  });
  for (const id of ids) holds.release(id, "anchor");
  const lastHolder = opsPerSecond(sessions, () => {
    for (const id of ids) holds.hold(id, "visitor").release();
  });
  holds.close();
  return [
    ["hold + release pairs, 10k sessions (others hold too)", `${fmt.int(withAnchor)}/s`, "≥ 1,000,000/s"],
    ["hold + release pairs, 10k sessions (last holder: clock armed/cancelled)", `${fmt.int(lastHolder)}/s`, "≥ 1,000,000/s"],
  ];
}

/** Retained heap per item once `build` has settled (needs `node --expose-gc`). */
async function settledHeapBytesPer(count: number, build: (count: number) => Promise<unknown>): Promise<number | undefined> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return undefined;
  gc();
  const before = process.memoryUsage().heapUsed;
  const built = await build(count);
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  const perItem = (process.memoryUsage().heapUsed - before) / count;
  retain(built);
  return perItem;
}

// biome-ignore lint/correctness/noUnusedVariables: written, never read: keeps the measured value alive for the garbage collector
let sink: unknown;
function retain(value: unknown): void {
  sink = value;
}

async function memoryFigures(): Promise<Array<[string, string, string?]>> {
  const count = 100_000;
  const perLocation = await settledHeapBytesPer(count, (n) => retentionWith(n, 0));
  const perSession = await settledHeapBytesPer(count, async (n) => holdsWithLiveChildren(n));
  retain(undefined);
  return [
    ["heap per cached location entry (key, cache entry, retention entry)", fmt.bytes(perLocation), "≤ 1 KB"],
    ["heap per held session (record, holder, live child)", fmt.bytes(perSession), "≤ 1 KB"],
  ];
}

export async function runLifecycleBench(): Promise<void> {
  table("Lifecycle kernel", [...(await sweepFigures()), ...(await touchFigures()), ...(await holdFigures()), ...(await memoryFigures())]);
}
