import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

type Env = Readonly<Record<string, string | undefined>>;

/** A configured path (absolute, or under the home): `~` and `~/…` under `home`; any other path as written. */
export function expandHome(path: string, home: string): string {
  if (path === "~") return home;
  return path.startsWith("~/") ? join(home, path.slice(2)) : path;
}

/** `$XDG_DATA_HOME/berth`, else `~/.local/share/berth`. */
export function defaultDataDir(env: Env = process.env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "berth");
}

/** `$XDG_CONFIG_HOME/berth/config.json`, else `~/.config/berth/config.json`. */
export function defaultConfigPath(env: Env = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "berth", "config.json");
}

/** Where everything of one host lives inside its data directory. */
export function dataPaths(dataDir: string) {
  return {
    dataDir,
    database: join(dataDir, "berth.sqlite"),
    token: join(dataDir, "token"),
    /** Remembered devices, as hashes (server/device-logins.ts). */
    logins: join(dataDir, "logins.json"),
    terminalOutput: join(dataDir, "terminal-output"),
    agentState: join(dataDir, "agent-state"),
    /** Sessions' git worktrees, unless `worktrees.root` puts them elsewhere. */
    worktrees: join(dataDir, "worktrees"),
    hostFile: join(dataDir, "host.json"),
    /** The exclusive lock that makes the directory one host's (see server/host-lock.ts). */
    lock: join(dataDir, "host.lock"),
    /** The agents installed from the registry (agents/installed-agents.ts): their list, and each one's versions. */
    installedAgents: join(dataDir, "installed-agents.json"),
    agents: join(dataDir, "agents"),
    /** Agents' logins remembered on disk (`rememberLogins: "file"`). */
    agentLogins: join(dataDir, "agent-logins.json"),
    /** What a fleet host reads from (host/fleet.ts), made anew at each start; never the embedded store's database. */
    fleetMirror: join(dataDir, "fleet-mirror.sqlite"),
    /** Where a login's browser stand-in notes the address an agent opened (host/browser-capture.ts). */
    loginBrowser: join(dataDir, "login-browser"),
  };
}

/**
 * Whether an entry at the top of a data directory is Berth's: one {@link dataPaths} names, SQLite's `-wal` and `-shm`
 * beside a database, or a file written beside one to replace it (`token.<pid>.new`, `….tmp`) that a crash left.
 */
function isBerthEntry(name: string): boolean {
  return Object.values(dataPaths(""))
    .filter((path) => path !== "")
    .some((own) => name === own || name.startsWith(`${own}.`) || (own.endsWith(".sqlite") && name.startsWith(`${own}-`)));
}

/** A data directory that cannot be one (a file in its place). */
export class DataDirError extends Error {
  override readonly name = "DataDirError";
}

/** Creates the data directory (0700) if it is not there; a file in its place is refused by name. */
export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === "EEXIST" || code === "ENOTDIR") throw new DataDirError(`the data directory ${dataDir} is not a directory (a file is in its place)`);
    throw error;
  }
}

/** What {@link secureDataDir} found and changed. */
export interface DataDirSecurity {
  /** The directory's permission bits as found (e.g. 0o755), or undefined when it was just created. */
  readonly foundMode: number | undefined;
  /** True when group or others could read, write or enter it. */
  readonly wasOpen: boolean;
  /** Files and folders whose modes were tightened, relative to the data directory. */
  readonly tightened: readonly string[];
}

/**
 * Makes a data directory its owner's alone: the directory 0700, and each of Berth's own entries in it (its database,
 * token, worktrees...: {@link dataPaths}) with every folder in them 0700 and every file 0600 (an existing directory
 * included: a journal left 0644 by an older run is tightened), and the database file created 0600 before SQLite opens
 * it; SQLite gives its `-wal` and `-shm` files the database file's mode. Anything else in the directory (a data
 * directory pointed at a project by mistake) is left as it is. Symbolic links are not followed. Berth does not change
 * its umask: its children inherit it, and an agent's files in the user's project keep the user's umask; every file
 * Berth itself creates is given an explicit mode instead.
 */
export function secureDataDir(dataDir: string): DataDirSecurity {
  const paths = dataPaths(dataDir);
  let foundMode: number | undefined;
  try {
    foundMode = statSync(dataDir).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  ensureDataDir(dataDir);
  // The directory itself may be reached through a symlink (a data directory on another disk).
  const tightened = makePrivate(realpathSync(dataDir), isBerthEntry);
  createDatabaseFile(paths.database);
  return { foundMode, wasOpen: foundMode !== undefined && (foundMode & 0o077) !== 0, tightened };
}

/**
 * Takes group and other bits off `root` and everything in it this user owns (the owner's own bits stay: an
 * executable stays executable), or of `root`'s entries only those `only` takes; symbolic links are not followed.
 * Returns what changed, relative to `root`.
 */
export function makePrivate(root: string, only?: (entry: string) => boolean): string[] {
  const tightened: string[] = [];
  const tighten = (path: string, relative: string) => {
    const stats = lstatSync(path);
    if (stats.isSymbolicLink()) return;
    if (stats.uid !== process.getuid?.()) return;
    const wanted = stats.isDirectory() ? 0o700 : 0o600;
    if ((stats.mode & 0o077) !== 0) {
      chmodSync(path, (stats.mode & 0o700) | (wanted & 0o700));
      tightened.push(relative);
    }
    if (stats.isDirectory()) {
      for (const entry of readdirSync(path)) {
        if (relative === "." && only !== undefined && !only(entry)) continue;
        tighten(join(path, entry), relative === "." ? entry : join(relative, entry));
      }
    }
  };
  tighten(root, ".");
  return tightened;
}

/**
 * Creates an empty SQLite database file, 0600, if there is none: SQLite opens an existing empty file as a new
 * database and gives its `-wal` and `-shm` the file's mode, whatever the user's umask.
 */
export function createDatabaseFile(path: string): void {
  closeSync(openSync(path, "a", 0o600));
}
