import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../config/load-config.js";
import { Host } from "../host/host.js";
import { fmt, percentile, table } from "./measure.js";

async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Cold acquisition of the demo agent (spawn → initialize → session/new) vs a warm re-hold within the grace. */
export async function runHostBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-"));
  const workDir = mkdtempSync(join(tmpdir(), "berth-bench-work-"));
  const host = await Host.start({ config: parseConfig({ releaseGrace: "1h" }), dataDir });
  try {
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < 12; i++) {
      const session = await host.createSession({ cwd: workDir });
      cold.push(await timeMs(() => host.hold(session.id, "bench").child));
      host.hold(session.id, "bench").release();
      for (let j = 0; j < 50; j++) {
        warm.push(await timeMs(() => host.hold(session.id, "bench").child));
        host.hold(session.id, "bench").release();
      }
      await host.deleteSession(session.id);
    }
    cold.sort((a, b) => a - b);
    warm.sort((a, b) => a - b);
    table("Agent acquisition (demo agent, real processes)", [
      ["cold: spawn to ready, median", fmt.ms(percentile(cold, 50))],
      ["cold: spawn to ready, p90", fmt.ms(percentile(cold, 90))],
      ["warm: re-hold within the grace, median", fmt.ms(percentile(warm, 50))],
      ["warm: re-hold within the grace, p99", fmt.ms(percentile(warm, 99))],
      ["speed-up of a warm re-hold (median)", `${Math.round(percentile(cold, 50) / percentile(warm, 50)).toLocaleString("en-US")}x`],
    ]);
  } finally {
    await host.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
}
