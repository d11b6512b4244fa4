import { type ChildProcess, spawn } from "node:child_process";

/**
 * How a command ended: it exited (`exitCode` says how), a signal ended it, it outlived its time, or it printed more
 * than its output bound; in the last two its whole process group was killed.
 */
type CommandEnd = "exited" | "signalled" | "timed_out" | "output_over_limit";

/** What a command printed (as bytes: a file's contents may be any) and how it ended. */
export interface CommandResult {
  readonly end: CommandEnd;
  /** Its exit code when it exited, else null. */
  readonly exitCode: number | null;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
}

export interface CommandOptions {
  /** The child's whole environment (default the host's). */
  readonly env?: NodeJS.ProcessEnv;
  /** Past this its group is killed and it ends `timed_out`; default no limit. */
  readonly timeoutMs?: number;
  /** Standard output and error together past this many bytes: its group is killed and it ends `output_over_limit`. */
  readonly maxOutputBytes: number;
}

/** The command could not be started at all (`code` is the system's, `ENOENT` for a missing program or directory). */
export class CommandStartError extends Error {
  override readonly name = "CommandStartError";
  readonly code: string | undefined;
  constructor(
    readonly command: string,
    /** Undefined: the host's own. */
    readonly cwd: string | undefined,
    /** The system's error, as `spawn` gave it. */
    override readonly cause: NodeJS.ErrnoException,
  ) {
    super(`cannot run ${command} in ${cwd ?? "the host's working directory"}: ${cause.message}`, { cause });
    this.code = cause.code;
  }
}

/** How long, once its group is killed, what the command wrote is read on before its pipes are closed anyway. */
const DRAIN_MS = 250;

/**
 * Runs `command` (no shell) in `cwd` (the host's own when undefined) as the leader of its own process group, as the
 * host's other children (rule P1), and settles once it exited and its output ended, whatever its exit code. Past
 * `timeoutMs` or `maxOutputBytes` the whole group is killed (whatever it started goes with it); what it wrote before is
 * read to the pipes' end, but for {@link DRAIN_MS} at most: a process that left the group may hold them. Rejects only
 * with a {@link CommandStartError}.
 */
export function runCommand(command: string, args: readonly string[], cwd: string | undefined, options: CommandOptions): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const output = { stdout: [] as Buffer[], stderr: [] as Buffer[], bytes: 0 };
    let child: ChildProcess;
    try {
      child = spawn(command, args, { cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    } catch (error) {
      // spawn throws some errors (ETXTBSY, ENOMEM, E2BIG) and emits the others.
      reject(new CommandStartError(command, cwd, error as NodeJS.ErrnoException));
      return;
    }
    let settled = false;
    let cutFor: CommandEnd | undefined;
    let drain: NodeJS.Timeout | undefined;
    const end = (exitCode: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drain);
      const how = cutFor ?? (exitCode === null ? "signalled" : "exited");
      resolve({ end: how, exitCode: how === "exited" ? exitCode : null, stdout: Buffer.concat(output.stdout), stderr: Buffer.concat(output.stderr) });
    };
    const cut = (why: CommandEnd) => {
      if (cutFor !== undefined) return;
      cutFor = why;
      clearTimeout(timer);
      try {
        // The negative pid is the group: the command and anything it started.
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // The group is gone already.
      }
      drain = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        end(null);
      }, DRAIN_MS);
    };
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => cut("timed_out"), options.timeoutMs);
    for (const stream of ["stdout", "stderr"] as const) {
      child[stream]!.on("data", (chunk: Buffer) => {
        output.bytes += chunk.length;
        if (output.bytes > options.maxOutputBytes) cut("output_over_limit");
        else output[stream].push(chunk);
      });
    }
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new CommandStartError(command, cwd, error));
    });
    // `close`: exited and its output ended.
    child.once("close", (exitCode) => end(exitCode));
  });
}
