import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseConfig } from "../config/load-config.js";
import { Host } from "../host/host.js";
import { fmt, percentile, table } from "./measure.js";

const FLOOD_CHUNKS = 30_000;
const FLOOD_BYTES = 256;
const SIDE_SESSIONS = 4;

/** Methods that only read: not timed. */
const READS = /^(get|list|read|recent|replay|lastSeq|pending|after|#)/;

/**
 * Times every call the host's main thread makes into the store's writing methods and into
 * the journal (the host's own write paths), while one session floods and others run short
 * turns: a write that waits on a database lock shows here as a stall of the event loop.
 */
export async function runWriteStallBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-stall-"));
  const workDir = mkdtempSync(join(tmpdir(), "berth-stall-work-"));
  const host = await Host.start({ config: parseConfig({ releaseGrace: "1h" }), dataDir });
  const durations: number[] = [];
  /** Writes other than the journal's own events (turn marks, touches, titles, records, state...). */
  const others: number[] = [];
  /** The slowest call of each method, to name what stalls. */
  const slowest = new Map<string, number>();
  let measuring = false;
  const internals = (host as unknown as { parts: Record<string, Record<string, unknown>> }).parts;
  const store = internals.store as unknown as Record<string, object>;
  const targets: object[] = [
    internals.journal!,
    ...["sessions", "lifecycleRecords", "questions", "processGroups", "agentProfiles"].map((name) => store[name]!),
  ];
  for (const target of targets) {
    const isJournal = target === internals.journal;
    const proto = Object.getPrototypeOf(target) as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const original = proto[name];
      if (name === "constructor" || READS.test(name) || typeof original !== "function") continue;
      (target as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
        if (!measuring) return (original as (...a: unknown[]) => unknown).apply(this, args);
        const start = performance.now();
        try {
          return (original as (...a: unknown[]) => unknown).apply(this, args);
        } finally {
          const took = performance.now() - start;
          durations.push(took);
          if (took > (slowest.get(name) ?? 0)) slowest.set(name, took);
          if (!isJournal || !/^(append|update|notice)$/.test(name)) others.push(took);
        }
      };
    }
  }
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  try {
    const flooding = host.createSession({ cwd: workDir });
    const sides = Array.from({ length: SIDE_SESSIONS }, () => host.createSession({ cwd: workDir }));
    await host.prompt(flooding.id, [{ type: "text", text: "/flood 10 16" }]);
    for (const side of sides) await host.prompt(side.id, [{ type: "text", text: "warm up" }]);
    measuring = true;
    loopDelay.enable();
    let flooded = false;
    let sideTurns = 0;
    const flood = host.prompt(flooding.id, [{ type: "text", text: `/flood ${FLOOD_CHUNKS} ${FLOOD_BYTES}` }]).finally(() => (flooded = true));
    await Promise.all([
      flood,
      ...sides.map(async (side) => {
        while (!flooded) {
          await host.prompt(side.id, [{ type: "text", text: "ping" }]);
          sideTurns++;
        }
      }),
    ]);
    loopDelay.disable();
    measuring = false;
    durations.sort((a, b) => a - b);
    others.sort((a, b) => a - b);
    table(
      `Main-thread writes during /flood ${FLOOD_CHUNKS} × ${FLOOD_BYTES} B with ${SIDE_SESSIONS} sessions running short turns (${sideTurns} turns)`,
      [
        ["main-thread write calls timed", fmt.int(durations.length)],
        ["stall per write p50 / p99", `${fmt.ms(percentile(durations, 50))} / ${fmt.ms(percentile(durations, 99))}`, "p99 < 1 ms"],
        ["stall per write max", fmt.ms(durations.at(-1) ?? 0)],
        ["writes other than journal events (touch, title, records, state...)", fmt.int(others.length)],
        ["their stall p50 / p99", `${fmt.ms(percentile(others, 50))} / ${fmt.ms(percentile(others, 99))}`, "p99 < 1 ms"],
        ["their stall max", fmt.ms(others.at(-1) ?? 0)],
        [
          "slowest calls",
          [...slowest]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 3)
            .map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`)
            .join(", "),
        ],
        ["event-loop delay p99 / max", `${fmt.ms(loopDelay.percentile(99) / 1e6)} / ${fmt.ms(loopDelay.max / 1e6)}`],
      ],
    );
  } finally {
    await host.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) await runWriteStallBench();
