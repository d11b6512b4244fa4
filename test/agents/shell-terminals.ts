import { spawn, type ChildProcess } from "node:child_process";
import {
  RequestError,
  type CreateTerminalRequest,
  type CreateTerminalResponse,
  type TerminalExitStatus,
  type TerminalOutputResponse,
} from "@agentclientprotocol/sdk";

type TerminalState = { name: "running"; exited: Promise<TerminalExitStatus> } | { name: "exited"; exitStatus: TerminalExitStatus };

interface ShellTerminal {
  readonly child: ChildProcess;
  readonly pid: number;
  output: string;
  state: TerminalState;
}

/**
 * The client side of ACP `terminal/*` for tests: each terminal is a real child
 * process in its own process group, stopped as a group.
 */
export class ShellTerminals {
  private readonly live = new Map<string, ShellTerminal>();
  private nextId = 1;
  /** Every process group started, for the end-of-test process-table check. */
  readonly pids: number[] = [];
  readonly created: CreateTerminalRequest[] = [];
  readonly released: string[] = [];

  create(request: CreateTerminalRequest): CreateTerminalResponse {
    const child = spawn(request.command, request.args ?? [], {
      cwd: request.cwd ?? undefined,
      env: { ...process.env, ...Object.fromEntries((request.env ?? []).map((v) => [v.name, v.value])) },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid === undefined) throw RequestError.internalError({}, `could not start ${request.command}`);
    const terminalId = `terminal-${this.nextId++}`;
    const exited = new Promise<TerminalExitStatus>((resolve) =>
      // `close`, not `exit`: by then both pipes are drained, so the output is complete.
      child.once("close", (exitCode, signal) => resolve({ exitCode, signal })),
    );
    const terminal: ShellTerminal = { child, pid: child.pid, output: "", state: { name: "running", exited } };
    const append = (chunk: Buffer): void => void (terminal.output += chunk.toString("utf8"));
    child.stdout?.on("data", append);
    child.stderr?.on("data", append);
    void exited.then((exitStatus) => (terminal.state = { name: "exited", exitStatus }));
    this.live.set(terminalId, terminal);
    this.pids.push(child.pid);
    this.created.push(request);
    return { terminalId };
  }

  output(terminalId: string): TerminalOutputResponse {
    const terminal = this.get(terminalId);
    const exitStatus = terminal.state.name === "exited" ? terminal.state.exitStatus : null;
    return { output: terminal.output, truncated: false, exitStatus };
  }

  async waitForExit(terminalId: string): Promise<TerminalExitStatus> {
    const { state } = this.get(terminalId);
    return state.name === "exited" ? state.exitStatus : state.exited;
  }

  kill(terminalId: string): void {
    stopGroup(this.get(terminalId));
  }

  release(terminalId: string): void {
    stopGroup(this.get(terminalId));
    this.live.delete(terminalId);
    this.released.push(terminalId);
  }

  get liveCount(): number {
    return this.live.size;
  }

  /** Stops every terminal still held, and waits for them to exit. */
  async releaseAll(): Promise<void> {
    const exits = [...this.live.keys()].map(async (id) => {
      const waiting = this.waitForExit(id);
      this.release(id);
      await waiting;
    });
    await Promise.all(exits);
  }

  private get(terminalId: string): ShellTerminal {
    const terminal = this.live.get(terminalId);
    if (!terminal) throw RequestError.invalidParams({ terminalId }, `unknown terminal "${terminalId}"`);
    return terminal;
  }
}

/** Even after the shell exits, its background children may still hold the group. */
function stopGroup(terminal: ShellTerminal): void {
  try {
    process.kill(-terminal.pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}
