import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { processIsRunning, waitUntilGone } from "../support/process-table.js";

/** acpx's own entry point, run with this Node (acpx declares Node >= 22.13; see docs/api.md "Tested clients"). */
const acpxMain = fileURLToPath(new URL("../../node_modules/acpx/dist/cli.js", import.meta.url));
const berthMain = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** The environment variable that marks every process of one runner, so clean-up finds acpx's detached queue owners. */
const markerName = "BERTH_ACPX_TEST_RUN";

export interface AcpxResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The JSON-RPC messages of `--format json` output, in order. */
  readonly messages: Array<Record<string, unknown>>;
}

export interface RunOptions {
  /** Extra environment, e.g. `ACPX_AUTH_DEMO_TOKEN`. */
  readonly env?: Record<string, string>;
  /** Kills the command's process group after this long (default 30 s) and fails. */
  readonly timeoutMs?: number;
}

/** One acpx command running in the background (`/sleep 1h` while a test cancels it). */
export interface RunningAcpx {
  readonly pid: number;
  readonly output: () => string;
  readonly done: Promise<AcpxResult>;
}

/**
 * acpx as a user runs it: a real `acpx` process per command, with its session store in a
 * temporary HOME, talking to `agentCommand` (here `berth connect ...`). acpx starts a
 * detached "queue owner" per session that keeps the agent connection open between
 * commands for `--ttl` seconds; every process of this runner carries a marker in its
 * environment so {@link stop} finds and ends them all.
 */
export class AcpxRunner {
  readonly marker = randomUUID();
  readonly home: string;
  private readonly tmp: string;
  private readonly groups = new Set<number>();

  /** `baseDir`: a temporary directory for acpx's HOME; `cwd`: where acpx runs (its session scope). */
  constructor(
    baseDir: string,
    readonly cwd: string,
  ) {
    this.home = join(baseDir, "home");
    this.tmp = join(baseDir, "tmp");
    mkdirSync(this.home, { recursive: true });
    mkdirSync(this.tmp, { recursive: true });
  }

  /**
   * Runs `acpx ARGS` to its end with a queue owner of its own: it first waits until the previous
   * command's owner ended by its `--ttl`. A command reaching an owner just as its `--ttl` ends it
   * fails in acpx ("Queue owner is shutting down", or "read ECONNRESET; request outcome is unknown"),
   * so no command is sent to an owner that may be ending. Use {@link start} for a command meant for
   * the owner of a turn still running (`cancel`).
   */
  async run(args: readonly string[], options: RunOptions = {}): Promise<AcpxResult> {
    const left = await waitUntilGone(this.processes(), 10_000);
    if (left.length > 0) throw new Error(`acpx ${args.join(" ")}: the previous queue owner did not end by its --ttl: ${left.join(", ")}`);
    return this.start(args, options).done;
  }

  start(args: readonly string[], options: RunOptions = {}): RunningAcpx {
    const env: NodeJS.ProcessEnv = {
      ...withoutAcpxAuth(process.env),
      HOME: this.home,
      XDG_CONFIG_HOME: join(this.home, ".config"),
      // acpx makes directories of its own in the temp folder and leaves them: they go with the runner's.
      TMPDIR: this.tmp,
      [markerName]: this.marker,
      NO_COLOR: "1",
      ...options.env,
    };
    const child = spawn(process.execPath, [acpxMain, ...args], { cwd: this.cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const pid = child.pid!;
    this.groups.add(pid);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timeoutMs = options.timeoutMs ?? 30_000;
    const done = new Promise<AcpxResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        killGroup(pid);
        reject(new Error(`acpx ${args.join(" ")} did not end within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
      }, timeoutMs);
      child.once("error", reject);
      child.once("close", (code) => {
        clearTimeout(timer);
        this.groups.delete(pid);
        resolve({ code, stdout, stderr, messages: jsonLines(stdout) });
      });
    });
    return { pid, output: () => stdout + stderr, done };
  }

  /** Processes of this runner still running: acpx commands, queue owners, their `berth connect` or agent. */
  processes(): number[] {
    const needle = `${markerName}=${this.marker}`;
    return readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(needle) && processIsRunning(pid);
        } catch {
          return false;
        }
      });
  }

  /** Waits (bounded) until acpx's queue owners ended by their `--ttl`; then kills whatever is left, by process group. */
  async stop(boundMs = 5_000): Promise<number[]> {
    const left = await waitUntilGone(this.processes(), boundMs);
    for (const pid of [...this.groups, ...left]) killGroup(pid);
    for (const pid of left) killGroup(pid, false);
    return waitUntilGone(left, 2_000);
  }
}

/** Berth's stdio bridge, as the agent command acpx launches. */
export function berthConnectCommand(url: string, token: string, agent: string): string {
  return [process.execPath, berthMain, "connect", "--url", url, "--token", token, "--agent", agent].join(" ");
}

/** Polls an async condition until it holds; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(25);
  }
}

/** The methods of the JSON-RPC requests acpx sent (direction acpx → agent, i.e. with an id and a method). */
export function requestsSent(result: AcpxResult): string[] {
  return result.messages.filter((m) => typeof m.method === "string" && "id" in m).map((m) => m.method as string);
}

function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/** A credential in the test runner's own environment must not leak into a run that means to have none. */
function withoutAcpxAuth(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("ACPX_AUTH_")));
}

function killGroup(pid: number, group = true): void {
  try {
    process.kill(group ? -pid : pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
