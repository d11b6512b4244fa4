import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { demoAgentMain } from "../agents/agent-registry.js";
import { cpuSeconds, fmt, spread, table } from "./measure.js";

const cliMain = fileURLToPath(new URL("../cli/main.js", import.meta.url));
const RUNS = 5;

/**
 * What every user and every test that starts a host pays before anything happens: from spawn to `berth serve`'s
 * start-up line (a fresh data directory, and one a previous run left), and to the demo agent's answer to `initialize`.
 */
export async function runStartupBench(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "berth-bench-startup-"));
  try {
    const help: number[] = [];
    const fresh: Timing[] = [];
    const warm: Timing[] = [];
    const agent: Timing[] = [];
    const warmDir = join(work, "warm");
    await untilLine([cliMain, "serve", "--port", "0", "--data-dir", warmDir], work, isStartupLine); // leaves the store made
    for (let run = 0; run < RUNS; run++) {
      help.push(await untilExit([cliMain, "--help"], work));
      fresh.push(await untilLine([cliMain, "serve", "--port", "0", "--data-dir", join(work, `fresh-${run}`)], work, isStartupLine));
      warm.push(await untilLine([cliMain, "serve", "--port", "0", "--data-dir", warmDir], work, isStartupLine));
      agent.push(await untilLine([demoAgentMain, "--state-dir", join(work, `agent-${run}`)], work, isInitializeAnswer, INITIALIZE));
    }
    const wall = (timings: Timing[]) =>
      spread(
        timings.map((t) => t.ms),
        fmt.ms1,
      );
    // CPU time is what a busy machine changes least (Linux counts it in 10 ms ticks).
    const cpu = (timings: Timing[]) =>
      spread(
        timings.map((t) => t.cpuMs),
        fmt.ms1,
      );
    table(`Start-up, from spawn (min / median / max of ${RUNS}; CPU: the process's own, until then)`, [
      ["berth --help (node and the CLI alone)", spread(help, fmt.ms1)],
      ["berth serve to its start-up line, fresh data directory", wall(fresh)],
      ["  CPU", cpu(fresh)],
      ["berth serve to its start-up line, data directory of an earlier run", wall(warm)],
      ["  CPU", cpu(warm)],
      ["demo agent to its answer to initialize", wall(agent)],
      ["  CPU", cpu(agent)],
    ]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;

function isStartupLine(line: string): boolean {
  return line.startsWith("Berth is running: ");
}

function isInitializeAnswer(line: string): boolean {
  const message = JSON.parse(line) as { id?: unknown; result?: unknown };
  return message.id === 1 && message.result !== undefined;
}

interface Timing {
  readonly ms: number;
  readonly cpuMs: number;
}

/** From spawning `node args` until its stdout shows a line `wanted` accepts (then its group is killed). */
async function untilLine(args: string[], cwd: string, wanted: (line: string) => boolean, stdin?: string): Promise<Timing> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd,
    stdio: ["pipe", "pipe", "ignore"],
    detached: true,
    env: { ...process.env, XDG_CONFIG_HOME: cwd },
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    if (stdin !== undefined) child.stdin.write(stdin);
    const lines = createInterface({ input: child.stdout });
    for await (const line of lines) if (wanted(line)) return { ms: performance.now() - started, cpuMs: cpuSeconds(child.pid!) * 1000 };
    throw new Error(`node ${args.join(" ")} exited without the line awaited`);
  } finally {
    // A run that ended on its own was reaped already: killing its group again would hide why it ended.
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(-child.pid, "SIGKILL");
      await exited;
    }
  }
}

async function untilExit(args: string[], cwd: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return performance.now() - started;
}
