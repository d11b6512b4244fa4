import type { TerminalExitStatus } from "@agentclientprotocol/sdk";
import type { ProcessGroupLedger } from "../processes/ledger.js";
import { spawnGroup, type ExitStatus, type SpawnedGroup } from "../processes/spawn-group.js";
import type { StopOptions } from "../processes/stop-group.js";
import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import { OutputFile } from "./terminal-output-files.js";
import { TerminalOutput, type OutputSnapshot } from "./terminal-output.js";

export interface TerminalSpec {
  readonly id: string;
  readonly sessionId: string;
  readonly command: string;
  readonly args: readonly string[];
  /** The command's whole environment. */
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly outputByteLimit: number;
  readonly outputFile: string;
  readonly ledger?: ProcessGroupLedger;
  readonly stop?: StopOptions;
  /** The asking session's sandbox, if it has one. */
  readonly sandbox?: SandboxPlan;
}

export interface TerminalOutputResult extends OutputSnapshot {
  readonly exitStatus: TerminalExitStatus | null;
}

type TerminalState = { readonly name: "running" } | { readonly name: "exited"; readonly status: ExitStatus };

/** One command started for an agent: its process group, its bounded output and its spill file. */
export class Terminal {
  private state: TerminalState = { name: "running" };
  private pipesClosed = false;
  private readonly exit: Promise<ExitStatus>;
  private readonly output: TerminalOutput;
  private readonly file: OutputFile;

  static async start(spec: TerminalSpec): Promise<Terminal> {
    const group = await spawnGroup({
      command: spec.command,
      args: spec.args,
      cwd: spec.cwd,
      env: spec.env,
      kind: "terminal",
      ledger: spec.ledger,
      stop: spec.stop,
      sandbox: spec.sandbox,
    });
    return new Terminal(spec, group);
  }

  private constructor(
    readonly spec: TerminalSpec,
    private readonly group: SpawnedGroup,
  ) {
    const { child } = group;
    const output = new TerminalOutput(spec.outputByteLimit);
    const file = new OutputFile(spec.outputFile);
    this.output = output;
    this.file = file;
    const capture = (chunk: Buffer): void => {
      output.append(chunk);
      file.write(chunk);
    };
    child.stdout?.on("data", capture);
    child.stderr?.on("data", capture);
    void group.outputClosed.then(() => (this.pipesClosed = true));
    // A background job that inherited the pipes keeps them open: the exit is reported after a bounded wait.
    this.exit = group.exited.then(async (status) => {
      await group.outputDrained();
      this.state = { name: "exited", status };
      return status;
    });
  }

  get id(): string {
    return this.spec.id;
  }

  get sessionId(): string {
    return this.spec.sessionId;
  }

  snapshot(): TerminalOutputResult {
    const exitStatus = this.state.name === "exited" ? { ...this.state.status } : null;
    return { ...this.output.snapshot(this.pipesClosed), exitStatus };
  }

  waitForExit(): Promise<ExitStatus> {
    return this.exit;
  }

  /** Stops the whole process group (once) and waits until the command's exit is known. */
  async stop(): Promise<ExitStatus> {
    await this.group.stop();
    return this.exit;
  }

  /** Stops the command, then lets go of the pipes and closes the spill file. */
  async close(): Promise<void> {
    await this.stop();
    // A process that left the group may still hold the pipes; they are no longer read.
    this.group.child.stdout?.destroy();
    this.group.child.stderr?.destroy();
    await this.file.close();
  }
}
