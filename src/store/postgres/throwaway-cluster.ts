import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { signalGroup } from "../../processes/group-signals.js";

/**
 * A private PostgreSQL server for tests and benchmarks: a fresh cluster in a temporary
 * directory, reachable only through a unix socket in that directory (no TCP port, so nothing to
 * collide with and nothing reachable from outside), stopped and removed by {@link ThrowawayCluster.stop}.
 * It never touches a system cluster Debian's package may have created.
 */
export interface ThrowawayCluster {
  /** Connection URL of the `postgres` database, e.g. `postgres://berth@localhost:5432/postgres?host=%2Ftmp%2Fberth-pg-x`
   * (libpq's `host` parameter: the socket's directory). */
  readonly url: string;
  /** The directory holding the data, the socket and the server's log. */
  readonly dir: string;
  /** The postmaster's pid, which is also its process group's id (a new one after {@link start}). */
  readonly pid: number;
  /** The server's major version, e.g. 15. */
  readonly version: number;
  /** Milliseconds from `initdb` to a server ready for connections. */
  readonly startMs: number;
  /** A URL to another database of the cluster (create it first). */
  urlOf(database: string): string;
  /**
   * An outage: stops the server (fast shutdown: clients are disconnected) and keeps its data, so {@link start} brings
   * the same cluster back. Idempotent.
   */
  halt(): Promise<void>;
  /** Starts the server again after {@link halt}, on the same data, socket and URL; resolves once it is ready. */
  start(): Promise<void>;
  /** Stops the server (fast shutdown, then its process group is killed if it lingers) and removes the directory. Idempotent. */
  stop(): Promise<void>;
}

export interface ThrowawayOptions {
  /**
   * `fsync` and `synchronous_commit` off: fine for tests (the cluster dies with them), never for a
   * benchmark that claims durability. Default false.
   */
  readonly unsafeFast?: boolean;
}

const BINARIES_ROOT = "/usr/lib/postgresql";
const INSTALL_HINT = "install Debian's postgresql package (apt-get install -y postgresql)";
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
/** The user initdb runs as when we are root: it refuses to run as root. */
const UNPRIVILEGED = { name: "nobody", uid: 65534, gid: 65534 };
const USER = "berth";
const PORT = 5432;

/** The newest PostgreSQL server installed the Debian way, or undefined. */
export function findPostgresBinaries(): { bin: string; version: number } | undefined {
  if (!existsSync(BINARIES_ROOT)) return undefined;
  const versions = readdirSync(BINARIES_ROOT)
    .map(Number)
    .filter((version) => Number.isInteger(version) && existsSync(join(BINARIES_ROOT, String(version), "bin", "postgres")))
    .sort((a, b) => b - a);
  const version = versions[0];
  return version === undefined ? undefined : { bin: join(BINARIES_ROOT, String(version), "bin"), version };
}

/** Creates and starts a cluster; rejects with the server's own log lines if it cannot. */
export async function startThrowawayCluster(options: ThrowawayOptions = {}): Promise<ThrowawayCluster> {
  const found = findPostgresBinaries();
  if (!found) throw new Error(`no PostgreSQL server under ${BINARIES_ROOT}/*/bin: ${INSTALL_HINT}`);
  const started = performance.now();
  const asRoot = process.getuid?.() === 0;
  // The unprivileged user must reach its directory: a TMPDIR under /root would not do.
  const dir = mkdtempSync(join(asRoot && !searchableByAll(tmpdir()) ? "/tmp" : tmpdir(), "berth-pg-"));
  // initdb and postgres refuse root: the directory belongs to an unprivileged user who runs both.
  if (asRoot) chownSync(dir, UNPRIVILEGED.uid, UNPRIVILEGED.gid);
  const data = join(dir, "data");
  const run = (command: string, args: string[]) =>
    asRoot
      ? { command: "setpriv", args: [`--reuid=${UNPRIVILEGED.uid}`, `--regid=${UNPRIVILEGED.gid}`, "--clear-groups", "--", command, ...args] }
      : { command, args };
  let server: ChildProcess | undefined;
  const serve = async () => {
    const settings = [
      "listen_addresses=",
      `unix_socket_directories=${dir}`,
      `port=${PORT}`,
      ...(options.unsafeFast ? ["fsync=off", "synchronous_commit=off", "full_page_writes=off"] : []),
    ];
    const log = openSync(join(dir, "server.log"), "a");
    if (asRoot) chownSync(join(dir, "server.log"), UNPRIVILEGED.uid, UNPRIVILEGED.gid);
    const postgres = run(join(found.bin, "postgres"), ["-D", data, ...settings.flatMap((setting) => ["-c", setting])]);
    // Its own process group, so the stop reaches every backend even if the postmaster is gone.
    server = spawn(postgres.command, postgres.args, { cwd: dir, stdio: ["ignore", log, log], detached: true });
    closeSync(log);
    await waitUntilReady(server, data, dir);
  };
  try {
    const init = run(join(found.bin, "initdb"), ["-D", data, "-U", USER, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]);
    const initdb = spawnSync(init.command, init.args, { encoding: "utf8", cwd: dir });
    if (initdb.status !== 0) {
      throw new Error(`initdb failed (${initdb.error?.message ?? `status ${initdb.status}`}): ${(initdb.stderr ?? "").trim().slice(-2000)}`);
    }
    await serve();
  } catch (error) {
    await stopServer(server);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const startMs = performance.now() - started;
  // A test runner that dies without its hooks still takes the server with it.
  const onExit = () => {
    const pgid = runningGroup(server);
    if (pgid !== undefined) signalGroup(pgid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  let stopping: Promise<void> | undefined;
  /** The server's state: `running`, `halted` (data kept), or `removed`. */
  let state: "running" | "halted" | "removed" = "running";
  const urlOf = (database: string) => `postgres://${USER}@localhost:${PORT}/${encodeURIComponent(database)}?host=${encodeURIComponent(dir)}`;
  return {
    url: urlOf("postgres"),
    dir,
    get pid() {
      return server!.pid!;
    },
    version: found.version,
    startMs,
    urlOf,
    halt: async () => {
      if (state !== "running") return;
      state = "halted";
      await stopServer(server);
    },
    start: async () => {
      if (state !== "halted") throw new Error(`the cluster is ${state}, not halted: nothing to start`);
      state = "running";
      await serve();
    },
    stop: () => {
      stopping ??= (async () => {
        state = "removed";
        process.removeListener("exit", onExit);
        await stopServer(server);
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/** Waits for the condition itself: the postmaster's status line says `ready`, or it exited (then its log says why). */
async function waitUntilReady(server: ChildProcess, data: string, dir: string): Promise<void> {
  const pidFile = join(data, "postmaster.pid");
  const deadline = performance.now() + READY_TIMEOUT_MS;
  let exit: string | undefined;
  server.once("exit", (code, signal) => (exit = signal ? `signal ${signal}` : `exit code ${code}`));
  server.once("error", (error) => (exit = error.message));
  for (;;) {
    if (exit !== undefined) throw new Error(`postgres stopped before it was ready (${exit}): ${logTail(dir)}`);
    // Line 8 of postmaster.pid is the server's status: `starting`, then `ready`.
    if (existsSync(pidFile) && readFileSync(pidFile, "utf8").split("\n")[7]?.trim() === "ready") return;
    if (performance.now() > deadline) throw new Error(`postgres was not ready within ${READY_TIMEOUT_MS} ms: ${logTail(dir)}`);
    await sleep(10);
  }
}

/** Every directory from the root down to `path` may be traversed by any user. */
function searchableByAll(path: string): boolean {
  for (let current = resolve(path); ; current = dirname(current)) {
    if ((statSync(current).mode & 0o001) === 0) return false;
    if (current === dirname(current)) return true;
  }
}

function logTail(dir: string): string {
  try {
    return readFileSync(join(dir, "server.log"), "utf8").trim().split("\n").slice(-10).join("\n");
  } catch {
    return "(no server log)";
  }
}

/** The server's process group while it runs; none once it exited (halted before): its id may belong to someone else by now. */
function runningGroup(server: ChildProcess | undefined): number | undefined {
  return server?.exitCode === null && server.signalCode === null ? server.pid : undefined;
}

async function stopServer(server: ChildProcess | undefined): Promise<void> {
  const pgid = runningGroup(server);
  if (pgid === undefined) return;
  await stopGroupOf(
    pgid,
    once(server!, "exit").then(() => undefined),
  );
}

/** SIGINT is PostgreSQL's fast shutdown (clients disconnected, a clean checkpoint); a bounded wait, then the group is killed. */
async function stopGroupOf(pgid: number, exited: Promise<void>): Promise<void> {
  signalGroup(pgid, "SIGINT");
  const timedOut = Symbol("timeout");
  const outcome = await Promise.race([exited, sleep(STOP_TIMEOUT_MS, timedOut, { ref: false })]);
  // The postmaster exits only after its backends: once it has, the group is empty and its id may be reused.
  if (outcome === timedOut) {
    signalGroup(pgid, "SIGKILL");
    await exited;
  }
}
