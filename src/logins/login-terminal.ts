import type { Readable } from "node:stream";
import type { AgentCommand } from "../agents/agent-child.js";
import { TerminalOutput } from "../location/terminal-output.js";
import type { ProcessGroupLedger } from "../processes/ledger.js";
import { spawnGroup, type ExitStatus, type SpawnedGroup } from "../processes/spawn-group.js";
import type { StopOptions } from "../processes/stop-group.js";
import { ptyLaunch, resizePty, type WindowSize } from "./pty.js";

export interface LoginTerminalOptions {
  readonly command: AgentCommand;
  readonly size: WindowSize;
  /** The login's working directory. */
  readonly cwd: string;
  /** Bytes of the screen's output kept for a client that attaches later. */
  readonly scrollbackBytes: number;
  readonly label: string;
  readonly ledger?: ProcessGroupLedger;
  readonly stop?: StopOptions;
}

type TerminalState = { readonly name: "running" } | { readonly name: "exited"; readonly status: ExitStatus };

/**
 * One login command running in a pseudo-terminal, in its own process group. Its screen is kept in memory only (a
 * bounded tail) and handed to whoever listens: it may show a secret, so it is never journaled nor logged.
 */
export class LoginTerminal {
  readonly exited: Promise<ExitStatus>;
  private state: TerminalState = { name: "running" };
  private readonly scrollback: TerminalOutput;
  private readonly listeners = new Set<(chunk: Buffer) => void>();
  /** The terminal's device, once the wrapper inside it has named it; resizes before then wait for it. */
  private readonly device: Promise<string | undefined>;

  static async start(options: LoginTerminalOptions): Promise<LoginTerminal> {
    const launch = ptyLaunch(options.command, options.size);
    const group = await spawnGroup({
      command: launch.command,
      args: launch.args,
      env: launch.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      kind: "terminal",
      label: options.label,
      ledger: options.ledger,
      stop: options.stop,
    });
    return new LoginTerminal(group, options.scrollbackBytes);
  }

  private constructor(
    private readonly group: SpawnedGroup,
    scrollbackBytes: number,
  ) {
    this.scrollback = new TerminalOutput(scrollbackBytes);
    const { child } = group;
    const show = (chunk: Buffer): void => {
      this.scrollback.append(chunk);
      for (const listener of this.listeners) listener(chunk);
    };
    child.stdout?.on("data", show);
    // script's own complaints (it could not open a terminal) belong on the same screen.
    child.stderr?.on("data", show);
    // Writes to a login that just ended fail with EPIPE: the exit says what happened.
    child.stdin?.on("error", () => undefined);
    this.device = firstLine(child.stdio[3] as Readable | null);
    this.exited = group.exited.then(async (status) => {
      await group.outputDrained();
      this.state = { name: "exited", status };
      return status;
    });
  }

  get pid(): number {
    return this.group.entry.pgid;
  }

  /** The exit status once the command ended; undefined while it runs. */
  get exitStatus(): ExitStatus | undefined {
    return this.state.name === "exited" ? this.state.status : undefined;
  }

  /** What the screen showed last (its bounded tail), for a client that attaches now. */
  screen(): Buffer {
    return this.scrollback.bytes();
  }

  /** Calls `listener` with each piece of output from now on; returns what stops it. */
  onOutput(listener: (chunk: Buffer) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Keys typed, as the terminal receives them. */
  write(input: string | Buffer): void {
    if (this.state.name === "running") this.group.child.stdin?.write(input);
  }

  async resize(size: WindowSize): Promise<void> {
    const device = await this.device;
    if (device !== undefined && this.state.name === "running") await resizePty(device, size);
  }

  /** Stops the whole process group (once) and waits until the command's exit is known. */
  async stop(): Promise<ExitStatus> {
    await this.group.stop();
    return this.exited;
  }
}

/** The first line a stream carries (the wrapper's `tty`), or undefined if it closes first. */
function firstLine(stream: Readable | null): Promise<string | undefined> {
  if (!stream) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let text = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      text += chunk;
      if (!text.includes("\n")) return;
      const line = text.slice(0, text.indexOf("\n"));
      resolve(line.startsWith("/dev/") ? line : undefined);
    });
    stream.once("close", () => resolve(undefined));
  });
}
