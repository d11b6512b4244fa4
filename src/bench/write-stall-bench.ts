import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { parseConfig } from "../config/load-config.js";
import { Host } from "../host/host.js";
import { silentLogger } from "../host/logger.js";
import { startBerth } from "../server/serve.js";
import { fmt, percentile, table } from "./measure.js";

const FLOOD_CHUNKS = 30_000;
const FLOOD_BYTES = 256;
const SIDE_SESSIONS = 4;

/** Methods that only read (or note a queued change in memory): not timed. */
const READS = /^(get|list|read|recent|replay|lastSeq|pending|after|queued|landed|#)/;

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
  /** Calls of the store's own writing methods on this thread: the one writer makes them on its thread only. */
  let storeWrites = 0;
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
          if (!isJournal) storeWrites++;
          if (!isJournal || !/^(append|update|notice)$/.test(name)) others.push(took);
        }
      };
    }
  }
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  try {
    const flooding = await host.createSession({ cwd: workDir });
    const sides = await Promise.all(Array.from({ length: SIDE_SESSIONS }, () => host.createSession({ cwd: workDir })));
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
        ["main-thread write calls timed (the journal's)", fmt.int(durations.length)],
        ["SQLite writes made on the main thread", fmt.int(storeWrites), "0"],
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

/** Beyond the 5 s busy timeout Berth once had, to show what a long outside transaction does. */
const LOCK_HOLD_MS = Number(process.env.BERTH_BENCH_LOCK_MS ?? 6_000);
const LOCKED_FLOOD_CHUNKS = 2_000;
const HEALTHZ_EVERY_MS = 25;

/**
 * Another process holds the SQLite write lock (`BEGIN IMMEDIATE`, as `sqlite3 berth.sqlite` would)
 * for a few seconds while clients of a real server (in this process) create a session and prompt:
 * how long `/healthz` takes over HTTP meanwhile, how long the event loop is held, and what became
 * of the work. First with no lock and nothing running (the machine's own noise), then with short
 * prompts, then with a flood relayed during the lock (the relay's own cost shows there).
 */
export async function runOutsideLockBench(): Promise<void> {
  for (const { lock, flood } of [
    { lock: false, flood: false },
    { lock: true, flood: false },
    { lock: true, flood: true },
  ]) {
    const dataDir = mkdtempSync(join(tmpdir(), "berth-lock-"));
    const workDir = mkdtempSync(join(tmpdir(), "berth-lock-work-"));
    const berth = await startBerth({ config: parseConfig({ releaseGrace: "1h" }), dataDir, listenHost: "127.0.0.1", port: 0, log: silentLogger() });
    const { host } = berth;
    try {
      const session = await host.createSession({ cwd: workDir });
      await host.prompt(session.id, [{ type: "text", text: "warm up" }]);
      const holder = lock ? await holdWriteLock(join(dataDir, "berth.sqlite"), LOCK_HOLD_MS) : undefined;
      const loopDelay = monitorEventLoopDelay({ resolution: 1 });
      loopDelay.enable();
      // Garbage collection also holds the event loop: its longest pause, to tell it from the store.
      let longestGc = 0;
      const gc = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) longestGc = Math.max(longestGc, entry.duration);
      });
      gc.observe({ entryTypes: ["gc"] });
      const healthz: number[] = [];
      let degraded = 0;
      let probing = true;
      const probe = (async () => {
        while (probing) {
          const start = performance.now();
          const body = (await (await fetch(`${berth.server.url}/healthz`)).json()) as { status: string };
          healthz.push(performance.now() - start);
          if (body.status === "degraded") degraded++;
          await new Promise((resolve) => setTimeout(resolve, HEALTHZ_EVERY_MS));
        }
      })();
      const lockedAt = performance.now();
      if (!holder) {
        await new Promise((resolve) => setTimeout(resolve, LOCK_HOLD_MS));
        probing = false;
        await probe;
        loopDelay.disable();
        gc.disconnect();
        healthz.sort((a, b) => a - b);
        table(`No lock, nothing running, for ${LOCK_HOLD_MS / 1000} s: the machine's own noise`, [
          ["/healthz p50 / p99 / max", `${fmt.ms(percentile(healthz, 50))} / ${fmt.ms(percentile(healthz, 99))} / ${fmt.ms(healthz.at(-1) ?? 0)}`],
          ["event-loop delay p99 / max", `${fmt.ms(loopDelay.percentile(99) / 1e6)} / ${fmt.ms(loopDelay.max / 1e6)}`],
          ["longest garbage-collection pause", fmt.ms(longestGc)],
        ]);
        continue;
      }
      const text = flood ? `/flood ${LOCKED_FLOOD_CHUNKS} 64` : "a short prompt";
      const [prompted, created] = await Promise.all([
        timed(() => host.prompt(session.id, [{ type: "text", text }])),
        timed(async () => host.createSession({ cwd: workDir })),
      ]);
      await holder.released;
      probing = false;
      await probe;
      loopDelay.disable();
      gc.disconnect();
      healthz.sort((a, b) => a - b);
      const events = host.events(session.id);
      const turnStart = events.findLast((event) => event.kind === "turn_started")?.seq ?? 0;
      const updates = events.filter((event) => event.seq > turnStart && event.kind === "update").length;
      const contiguous = events.every((event, index) => event.seq === index + 1);
      table(
        `An outside process holds the write lock for ${LOCK_HOLD_MS / 1000} s while a client creates a session and prompts ${flood ? `/flood ${LOCKED_FLOOD_CHUNKS} 64` : "a short turn"} (real server, this process)`,
        [
          [`/healthz over HTTP, every ${HEALTHZ_EVERY_MS} ms: answers, of them degraded`, `${healthz.length}, ${degraded}`],
          [
            "/healthz p50 / p99 / max",
            `${fmt.ms(percentile(healthz, 50))} / ${fmt.ms(percentile(healthz, 99))} / ${fmt.ms(healthz.at(-1) ?? 0)}`,
            "< 100 ms",
          ],
          ["event-loop delay p99 / max", `${fmt.ms(loopDelay.percentile(99) / 1e6)} / ${fmt.ms(loopDelay.max / 1e6)}`],
          ["longest garbage-collection pause", fmt.ms(longestGc)],
          ["prompt", `${prompted.outcome} after ${fmt.ms(prompted.ms)}`],
          ["its updates stored, all seqs contiguous", `${fmt.int(updates)}, ${contiguous ? "yes" : "no"}`],
          ["session created while locked", `${created.outcome} after ${fmt.ms(created.ms)}`],
          ["lock held for", fmt.ms(holder.heldMs(lockedAt))],
        ],
      );
    } finally {
      await berth.shutdown();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(workDir, { recursive: true, force: true });
    }
  }
}

async function timed(work: () => Promise<unknown>): Promise<{ outcome: string; ms: number }> {
  const start = performance.now();
  try {
    await work();
    return { outcome: "ok", ms: performance.now() - start };
  } catch (error) {
    return { outcome: `failed (${error instanceof Error ? error.message.slice(0, 80) : String(error)})`, ms: performance.now() - start };
  }
}

/** A real other process that takes the write lock and lets go of it after `holdMs` on its own clock. */
async function holdWriteLock(path: string, holdMs: number): Promise<{ released: Promise<void>; heldMs: (from: number) => number }> {
  const script = `const Database = require("better-sqlite3");
const db = new Database(process.argv[1]);
db.exec("BEGIN IMMEDIATE");
console.log("locked");
setTimeout(() => { db.exec("ROLLBACK"); db.close(); console.log("released"); }, Number(process.argv[2]));`;
  const child = spawn(process.execPath, ["-e", script, path, String(holdMs)], {
    cwd: new URL("../..", import.meta.url),
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  let releasedAt = 0;
  const released = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("released") && releasedAt === 0) releasedAt = performance.now();
    });
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`the lock holder exited with ${code}`))));
  });
  while (!output.includes("locked")) {
    if (child.exitCode !== null) throw new Error("the lock holder exited before it held the lock");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { released, heldMs: (from) => (releasedAt === 0 ? Number.NaN : releasedAt - from) };
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  await runWriteStallBench();
  await runOutsideLockBench();
}
