/** Small helpers for benchmarks that print figures (never assertions). */
import { readFileSync } from "node:fs";

export function percentile(sortedMs: readonly number[], p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const index = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)]!;
}

/** Runs `fn` `samples` times and returns each duration in ms, sorted. */
export function sampleMs(samples: number, fn: () => void): number[] {
  const durations: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint();
    fn();
    durations.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return durations.sort((a, b) => a - b);
}

/** Operations per second of `fn`, which performs `operations` operations per call. */
export function opsPerSecond(operations: number, fn: () => void, minMs = 300): number {
  fn(); // warm up
  let calls = 0;
  const start = process.hrtime.bigint();
  let elapsedMs = 0;
  while (elapsedMs < minMs) {
    fn();
    calls++;
    elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return (calls * operations) / (elapsedMs / 1000);
}

/** min / median / max of `values`, each written by `format`. */
export function spread(values: readonly number[], format: (n: number) => string): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${format(sorted[0]!)} / ${format(sorted[Math.floor(sorted.length / 2)]!)} / ${format(sorted.at(-1)!)}`;
}

/** CPU time (user + system) a process has used so far, in seconds (Linux: `/proc/<pid>/stat`, at 100 ticks a second). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The most memory the process ever had resident (Linux), in MB. */
export function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString("en-US"),
  ms: (n: number) => `${n.toFixed(3)} ms`,
  ms1: (n: number) => `${n.toFixed(1)} ms`,
  percent: (n: number) => `${n.toFixed(1)} %`,
  bytes: (n: number | undefined) => (n === undefined ? "n/a (run with --expose-gc)" : `${Math.round(n)} B`),
};

export function table(title: string, rows: Array<[string, string, string?]>): void {
  console.log(`\n${title}`);
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value, target] of rows) {
    console.log(`  ${name.padEnd(width)}  ${value.padStart(18)}${target ? `   (target ${target})` : ""}`);
  }
}
