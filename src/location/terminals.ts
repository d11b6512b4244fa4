import type { EnvVariable } from "@agentclientprotocol/sdk";
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { isAbsolute } from "node:path";
import type { ProcessGroupLedger } from "../processes/ledger.js";
import type { ExitStatus } from "../processes/spawn-group.js";
import type { StopOptions } from "../processes/stop-group.js";
import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import { outputFilePath } from "./terminal-output-files.js";
import { assertByteLimit } from "./terminal-output.js";
import { Terminal, type TerminalOutputResult, type TerminalSpec } from "./terminal.js";

const DEFAULT_OUTPUT_BYTE_LIMIT = 1024 * 1024;

export interface TerminalsOptions {
  /** The location's directory: where commands run when they name no `cwd`. */
  readonly directory: string;
  /** Where each terminal's full output is written, one file per terminal. */
  readonly outputDir: string;
  /** Output kept in memory per terminal when the request sets no limit (default 1 MiB). */
  readonly outputByteLimit?: number;
  /** Told about each command's process group when it starts and when it is gone. */
  readonly ledger?: ProcessGroupLedger;
  /** How commands are stopped (default: SIGTERM, 3 s, SIGKILL). */
  readonly stop?: StopOptions;
}

/** ACP's `terminal/create` parameters, as Berth uses them. */
export interface CreateTerminalParams {
  readonly sessionId: string;
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the host's environment. */
  readonly env?: readonly EnvVariable[];
  /** Absolute; defaults to the location's directory. */
  readonly cwd?: string | null;
  readonly outputByteLimit?: number | null;
  /** The asking session's sandbox: the command runs in one like its agent's. */
  readonly sandbox?: SandboxPlan;
}

/**
 * The terminals of one location, serving all its sessions: ACP's `terminal/*`
 * methods answered on the host. `open` → `closed`: once closed (location
 * eviction) no command starts any more, and one that was starting is stopped.
 */
export class Terminals {
  private state: "open" | "closed" = "open";
  private readonly terminals = new Map<string, Terminal>();
  /** Creations under way, by the session asking; each includes the stop it does if the terminals close meanwhile. */
  private readonly starting = new Map<Promise<string>, string>();
  private closing: Promise<void> | undefined;

  constructor(private readonly options: TerminalsOptions) {
    if (options.outputByteLimit !== undefined) assertByteLimit(options.outputByteLimit);
  }

  /** Starts the command in its own process group and returns the new terminal's id. */
  async create(params: CreateTerminalParams): Promise<string> {
    this.assertOpen();
    const admission = this.admit(this.specFor(params));
    this.starting.set(admission, params.sessionId);
    try {
      return await admission;
    } finally {
      this.starting.delete(admission);
    }
  }

  // `asking`, where given, is the session asking: another session's terminal is unknown to it.

  /** The retained output, whether it was truncated, and the exit status once the command has exited. */
  output(terminalId: string, asking?: string): TerminalOutputResult {
    return this.get(terminalId, asking).snapshot();
  }

  async waitForExit(terminalId: string, asking?: string): Promise<ExitStatus> {
    return this.get(terminalId, asking).waitForExit();
  }

  /** Stops the command's whole process group (ACP `terminal/kill`); the terminal and its output stay. */
  async stop(terminalId: string, asking?: string): Promise<ExitStatus> {
    return this.get(terminalId, asking).stop();
  }

  /** Closes the terminal (ACP `terminal/release`): stops the command if it still runs; its id is unknown afterwards. */
  async close(terminalId: string, asking?: string): Promise<void> {
    const terminal = this.get(terminalId, asking);
    this.terminals.delete(terminalId);
    await terminal.close();
  }

  /** Closes every terminal of a session, including ones still starting, awaiting each stop. */
  async closeForSession(sessionId: string): Promise<void> {
    const admissions = [...this.starting].filter(([, owner]) => owner === sessionId);
    await Promise.allSettled(admissions.map(([admission]) => admission));
    await this.closeEach([...this.terminals.values()].filter((terminal) => terminal.sessionId === sessionId));
  }

  /** Closes the terminals for good: closes every terminal, including ones still starting. */
  closeAll(): Promise<void> {
    this.state = "closed";
    this.closing ??= (async () => {
      await Promise.allSettled([...this.starting.keys()]);
      await this.closeEach([...this.terminals.values()]);
    })();
    return this.closing;
  }

  /** The ids of the terminals not yet closed. */
  ids(): string[] {
    return [...this.terminals.keys()];
  }

  private async closeEach(terminals: readonly Terminal[]): Promise<void> {
    for (const terminal of terminals) this.terminals.delete(terminal.id);
    const results = await Promise.allSettled(terminals.map((terminal) => terminal.close()));
    const failures = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} terminal(s) could not be stopped`);
  }

  private get(terminalId: string, asking: string | undefined): Terminal {
    const terminal = this.terminals.get(terminalId);
    if (!terminal || (asking !== undefined && terminal.sessionId !== asking))
      throw new Error(`unknown terminal: ${JSON.stringify(terminalId)} (never created here, or released)`);
    return terminal;
  }

  private async admit(spec: TerminalSpec): Promise<string> {
    const { outputDir } = this.options;
    await mkdir(outputDir, { recursive: true, mode: 0o700 }).catch((error: Error) => {
      throw new Error(`cannot create terminal output directory ${outputDir}: ${error.message}`, { cause: error });
    });
    const terminal = await Terminal.start(spec);
    if (this.state === "closed") {
      await terminal.close();
      throw this.closedError();
    }
    this.terminals.set(terminal.id, terminal);
    return terminal.id;
  }

  private specFor(params: CreateTerminalParams): TerminalSpec {
    if (typeof params.sessionId !== "string" || params.sessionId.length === 0) {
      throw new Error(`terminal sessionId must be a non-empty string, got ${JSON.stringify(params.sessionId)}`);
    }
    if (typeof params.command !== "string" || params.command.length === 0) {
      throw new Error(`terminal command must be a non-empty string, got ${JSON.stringify(params.command)}`);
    }
    const cwd = params.cwd ?? this.options.directory;
    if (!isAbsolute(cwd)) throw new Error(`terminal cwd must be an absolute path, got ${JSON.stringify(cwd)}`);
    const outputByteLimit = params.outputByteLimit ?? this.options.outputByteLimit ?? DEFAULT_OUTPUT_BYTE_LIMIT;
    assertByteLimit(outputByteLimit);
    const id = randomUUID();
    return {
      id,
      sessionId: params.sessionId,
      command: params.command,
      args: params.args ?? [],
      env: { ...process.env, ...environmentOf(params.env ?? []) },
      cwd,
      outputByteLimit,
      outputFile: outputFilePath(this.options.outputDir, id),
      ledger: this.options.ledger,
      stop: this.options.stop,
      sandbox: params.sandbox,
    };
  }

  private assertOpen(): void {
    if (this.state === "closed") throw this.closedError();
  }

  private closedError(): Error {
    return new Error(`terminals of ${this.options.directory} are closed; no command can start`);
  }
}

function environmentOf(variables: readonly EnvVariable[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { name, value } of variables) {
    if (name.length === 0 || name.includes("=") || name.includes("\0")) {
      throw new Error(`invalid environment variable name: ${JSON.stringify(name)}`);
    }
    env[name] = value;
  }
  return env;
}
