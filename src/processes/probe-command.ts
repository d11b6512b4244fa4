import { spawnSync } from "node:child_process";
import { CommandStartError, type CommandResult, runCommand } from "./run-command.js";

/** spawnSync's default `maxBuffer`: past it both runners end the command with ENOBUFS. */
const SPAWN_SYNC_MAX_BUFFER = 1024 * 1024;

/**
 * A probe that may need to run one short command to find its answer: the answer already, or the command and what its
 * outcome means. The same probe then runs either blocking (on first use) or without blocking the event loop (at start,
 * alongside the host's other work).
 */
export type Probing<T> = { readonly answer: T } | { readonly run: ProbeCommand; readonly finish: (ran: ProbeRun) => T };

interface ProbeCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Killed after this long. Its stdin is ignored, its stderr read; past 1 MiB of output it is stopped (ENOBUFS). */
  readonly timeoutMs: number;
}

/** How the command ended: its exit status (null when killed), what it wrote on stderr, the error that stopped it. */
interface ProbeRun {
  readonly status: number | null;
  readonly stderr: string;
  readonly error?: Error;
}

export function settleSync<T>(probing: Probing<T>): T {
  if ("answer" in probing) return probing.answer;
  const { command, args, timeoutMs } = probing.run;
  const ran = spawnSync(command, args, { stdio: ["ignore", "ignore", "pipe"], timeout: timeoutMs });
  return probing.finish({ status: ran.status, stderr: ran.stderr?.toString() ?? "", ...(ran.error ? { error: ran.error } : {}) });
}

export async function settle<T>(probing: Probing<T>): Promise<T> {
  if ("answer" in probing) return probing.answer;
  const { command, args, timeoutMs } = probing.run;
  let ran: CommandResult;
  try {
    // Its own process group, stopped as one if it overruns (spawnSync's timeout signals the command alone).
    ran = await runCommand(command, args, undefined, { timeoutMs, maxOutputBytes: SPAWN_SYNC_MAX_BUFFER });
  } catch (error) {
    if (!(error instanceof CommandStartError)) throw error;
    return probing.finish({ status: null, stderr: "", error: error.cause });
  }
  const stderr = ran.stderr.toString();
  // As spawnSync reports them: past the deadline ETIMEDOUT, past its buffer ENOBUFS.
  if (ran.end === "timed_out") return probing.finish({ status: null, stderr, error: errnoError(`spawn ${command} ETIMEDOUT`, "ETIMEDOUT") });
  if (ran.end === "output_over_limit") return probing.finish({ status: null, stderr, error: errnoError(`spawn ${command} ENOBUFS`, "ENOBUFS") });
  return probing.finish({ status: ran.exitCode, stderr });
}

function errnoError(message: string, code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}
