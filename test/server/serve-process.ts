import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitUntil } from "../support/process-table.js";

export const cliMain = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** `berth serve` (or any `berth` command) as a real child process in its own process group. */
export class BerthProcess {
  stdout = "";
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  /** The `--data-dir` the command was given, where its token is. */
  readonly dataDir: string | undefined;

  /** `wrapper`: a command that runs `node` with the rest as its arguments (it must exec it: the pid stays the host's). */
  constructor(args: readonly string[], env: Readonly<Record<string, string>>, wrapper: readonly string[] = []) {
    const dataDirFlag = args.indexOf("--data-dir");
    this.dataDir = dataDirFlag >= 0 ? args[dataDirFlag + 1] : undefined;
    const [command, ...commandArgs] = [...wrapper, process.execPath, cliMain, ...args];
    this.child = spawn(command!, commandArgs, { detached: true, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout!.on("data", (chunk: Buffer) => (this.stdout += chunk.toString()));
    this.child.stderr!.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    // 'close', not 'exit': 'exit' can come before the last of its output has been read from the pipes.
    this.exited = new Promise((resolve) => this.child.once("close", (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The start-up line, once printed. */
  async startupLine(): Promise<{ line: string; url: string; token: string; acpUrl: string }> {
    await waitUntil(() => this.stdout.includes("\n") || this.child.exitCode !== null, "berth serve printed its start-up line", 20_000);
    const line = this.stdout.split("\n")[0]!;
    const match = /^Berth is running: (http:\/\/[^/]+)\/\?token=([\w-]+) \(ACP: (ws:\/\/[^ ]+\/acp)\)$/.exec(line);
    if (match) return { line, url: match[1]!, token: match[2]!, acpUrl: match[3]! };
    // A token that is not new is not printed: the line says how to get the link, the token is in the data directory.
    const without =
      /^Berth is running: (http:\/\/[^/]+)\/ \(ACP: (ws:\/\/[^ ]+\/acp)\); dashboard link: node dist\/cli\/main\.js token --link( --data-dir (\S+))?$/.exec(
        line,
      );
    if (!without || !this.dataDir) throw new Error(`unexpected start-up line ${JSON.stringify(line)}; stderr: ${this.stderr}`);
    return { line, url: without[1]!, token: readFileSync(join(this.dataDir, "token"), "utf8").trim(), acpUrl: without[2]! };
  }

  /** The JSON log lines on stderr. */
  logLines(): Array<Record<string, unknown>> {
    return this.stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  signal(signal: NodeJS.Signals): void {
    process.kill(this.pid, signal);
  }

  /** After a test: anything of this process group still running is killed. */
  killGroup(): void {
    try {
      process.kill(-this.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/** Processes whose command line contains `marker` (a unique word a test put there). */
export function pidsWithArgument(marker: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** `berth serve` on a fresh data directory (also its XDG config home, so no user config leaks in). */
export async function serveOnTempDir(extraArgs: readonly string[] = []) {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-serve-"));
  const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, ...extraArgs], { XDG_CONFIG_HOME: dataDir });
  const started = await server.startupLine();
  return {
    server,
    dataDir,
    ...started,
    async stop(): Promise<void> {
      server.signal("SIGTERM");
      await server.exited;
      server.killGroup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
