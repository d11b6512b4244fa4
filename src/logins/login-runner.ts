import { homedir } from "node:os";
import { describeExit, type ExitStatus } from "../processes/spawn-group.js";
import type { ProcessGroupLedger } from "../processes/ledger.js";
import type { StopOptions } from "../processes/stop-group.js";
import { LoginsClosedError, type LoginCommandResolver } from "./login-command.js";
import { LoginTerminal } from "./login-terminal.js";
import type { WindowSize } from "./pty.js";

export interface LoginRunnerOptions {
  readonly resolve: LoginCommandResolver;
  /** A log line (`terminal login started`, `… ended`) and its fields: never the command nor the screen. */
  readonly log: (line: string, fields: Record<string, unknown>) => void;
  /** Bytes of a login's screen kept for a client that attaches later (default 64 KiB). */
  readonly scrollbackBytes?: number;
  /** How long a login with no client attached runs on before it is stopped (default 60 s): a dropped link may come back. */
  readonly detachGraceMs?: number;
  /** Where logins run (default the home directory). */
  readonly cwd?: string;
  readonly ledger?: ProcessGroupLedger;
  readonly stop?: StopOptions;
}

/** A running login as the API lists it. */
export interface LoginView {
  readonly agentId: string;
  readonly methodId: string;
  readonly pid: number;
  readonly startedAt: number;
  readonly clients: number;
}

/** A client's hold on a login: the screen so far, then its output and its end. */
export interface LoginAttachment {
  readonly agentId: string;
  readonly methodId: string;
  /** What the screen showed when the client attached. */
  readonly screen: Buffer;
  /** Output from the attach on (what came meanwhile first), to one listener. */
  onOutput(listener: (chunk: Buffer) => void): void;
  /** Settles once the login's command ended, with its status. */
  readonly exited: Promise<ExitStatus>;
  write(input: string | Buffer): void;
  resize(size: WindowSize): Promise<void>;
  /** The client left; the login runs on for the grace period if it was the last. Once. */
  detach(): void;
}

/** An agent's login is already running under another method: one login per agent at a time. */
export class LoginBusyError extends Error {
  override readonly name = "LoginBusyError";
  constructor(agentId: string, running: string, asked: string) {
    super(
      `a terminal login of agent ${JSON.stringify(agentId)} by method ${JSON.stringify(running)} is running; attach to it, or stop it before starting ${JSON.stringify(asked)}`,
    );
  }
}

const DEFAULT_SCROLLBACK_BYTES = 64 * 1024;
const DEFAULT_DETACH_GRACE_MS = 60_000;

/** One agent's login: `starting` while its command is resolved and spawned, then `running` until it exits. */
type Login =
  | { readonly state: "starting"; readonly methodId: string; readonly started: Promise<LoginTerminal> }
  | { readonly state: "running"; readonly methodId: string; readonly terminal: LoginTerminal; readonly startedAt: number };

interface Entry {
  login: Login;
  clients: number;
  grace: NodeJS.Timeout | undefined;
}

/**
 * Runs agents' terminal logins, at most one per agent: a client asking for the running method attaches to it (every
 * client sees the same screen and may type), a client asking for another method is refused. A login ends with its
 * command, or when no client has been attached for the grace period, or when it is stopped.
 */
export class LoginRunner {
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  constructor(private readonly options: LoginRunnerOptions) {}

  list(): LoginView[] {
    return [...this.entries].flatMap(([agentId, { login, clients }]) =>
      login.state === "running" ? [{ agentId, methodId: login.methodId, pid: login.terminal.pid, startedAt: login.startedAt, clients }] : [],
    );
  }

  /** Attaches to the agent's running login by `methodId`, starting it at `size` if none runs. */
  async attach(agentId: string, methodId: string, size: WindowSize): Promise<LoginAttachment> {
    if (this.closed) throw new LoginsClosedError();
    let entry = this.entries.get(agentId);
    if (entry && entry.login.methodId !== methodId) throw new LoginBusyError(agentId, entry.login.methodId, methodId);
    if (!entry) {
      entry = { login: { state: "starting", methodId, started: this.start(agentId, methodId, size) }, clients: 0, grace: undefined };
      this.entries.set(agentId, entry);
    }
    entry.clients++;
    clearTimeout(entry.grace);
    let terminal: LoginTerminal;
    try {
      terminal = entry.login.state === "running" ? entry.login.terminal : await entry.login.started;
    } catch (error) {
      if (this.entries.get(agentId) === entry) this.entries.delete(agentId);
      throw error;
    }
    return this.attachment(agentId, entry, terminal);
  }

  /** Stops the agent's login (only by `methodId`, if given); false if none runs. */
  async stop(agentId: string, methodId?: string): Promise<boolean> {
    const entry = this.entries.get(agentId);
    if (!entry || (methodId !== undefined && entry.login.methodId !== methodId)) return false;
    const terminal = entry.login.state === "running" ? entry.login.terminal : await entry.login.started.catch(() => undefined);
    await terminal?.stop();
    return true;
  }

  /** Stops every login and starts no more. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.keys()].map((agentId) => this.stop(agentId)));
  }

  private async start(agentId: string, methodId: string, size: WindowSize): Promise<LoginTerminal> {
    const command = await this.options.resolve(agentId, methodId);
    const terminal = await LoginTerminal.start({
      command,
      size,
      cwd: this.options.cwd ?? homedir(),
      scrollbackBytes: this.options.scrollbackBytes ?? DEFAULT_SCROLLBACK_BYTES,
      label: `login ${agentId} ${methodId}`,
      ledger: this.options.ledger,
      stop: this.options.stop,
    });
    const entry = this.entries.get(agentId)!;
    entry.login = { state: "running", methodId, terminal, startedAt: Date.now() };
    // What the command and the screen say stays out of the log: a login may show a secret.
    this.options.log("terminal login started", { agentId, methodId, pid: terminal.pid });
    void terminal.exited.then((status) => {
      clearTimeout(entry.grace);
      if (this.entries.get(agentId) === entry) this.entries.delete(agentId);
      this.options.log("terminal login ended", { agentId, methodId, status: describeExit(status) });
    });
    // A host stopped while this started must not leave it behind.
    if (this.closed) await terminal.stop();
    return terminal;
  }

  private attachment(agentId: string, entry: Entry, terminal: LoginTerminal): LoginAttachment {
    // Output between the screen's copy and the client's listener is held for it, so nothing falls in between.
    let pending: Buffer[] | undefined = [];
    let deliver = (chunk: Buffer): void => void pending?.push(chunk);
    const stopOutput = terminal.onOutput((chunk) => deliver(chunk));
    let attached = true;
    return {
      agentId,
      methodId: entry.login.methodId,
      screen: terminal.screen(),
      onOutput: (listener) => {
        for (const chunk of pending ?? []) listener(chunk);
        pending = undefined;
        deliver = listener;
      },
      exited: terminal.exited,
      write: (input) => terminal.write(input),
      resize: (size) => terminal.resize(size),
      detach: () => {
        if (!attached) return;
        attached = false;
        stopOutput();
        entry.clients--;
        if (entry.clients > 0 || terminal.exitStatus !== undefined) return;
        entry.grace = setTimeout(() => void terminal.stop(), this.options.detachGraceMs ?? DEFAULT_DETACH_GRACE_MS);
        entry.grace.unref();
      },
    };
  }
}
