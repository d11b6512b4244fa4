import Database from "better-sqlite3";
import { closeSync, openSync } from "node:fs";

/**
 * The exclusive, kernel-released lock that makes a data directory one host's.
 *
 * It is an exclusive lock on a dedicated SQLite file (`<dataDir>/host.lock`), taken with
 * `locking_mode = EXCLUSIVE` and a write: SQLite then holds a POSIX advisory (`fcntl`) write
 * lock on the file until the connection closes, and the kernel drops it the moment the process
 * dies, however it dies (SIGKILL included). No stale lock file, no pid to check, no race:
 * taking it is one non-blocking system call that either wins or fails with `SQLITE_BUSY`.
 * SQLite also tracks its own locks per inode inside a process, so a second attempt from the
 * same process (two hosts in one test run) is refused too, which a bare `fcntl` lock would not do.
 *
 * Why not the alternatives: Node has no `flock`/`fcntl`; an `O_EXCL` lock file survives a
 * SIGKILL and needs a liveness guess; `flock(1)` in a child process needs util-linux, an extra
 * process whose lifetime must be tied to ours, and an asynchronous handshake. better-sqlite3 is
 * already Berth's store, so this needs no new native code.
 */
export interface HostLock {
  readonly path: string;
  /** Releases the lock, once; later calls do nothing. */
  release(): void;
}

export class HostLockBusyError extends Error {
  override readonly name = "HostLockBusyError";
}

/** Takes the lock at `path` without waiting; throws {@link HostLockBusyError} if another holder has it. */
export function acquireHostLock(path: string): HostLock {
  // Created with its final mode: SQLite would create it with the umask's.
  closeSync(openSync(path, "a", 0o600));
  const db = new Database(path, { timeout: 0 });
  try {
    // The rollback journal in memory: no second file to leave behind.
    db.pragma("journal_mode = MEMORY");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since INTEGER NOT NULL)");
    db.exec("DELETE FROM holder");
    db.prepare("INSERT INTO holder (pid, since) VALUES (?, ?)").run(process.pid, Date.now());
    db.exec("COMMIT");
  } catch (error) {
    db.close();
    const code = (error as { code?: unknown }).code;
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
      throw new HostLockBusyError(`another process holds ${path}`, { cause: error });
    }
    throw error;
  }
  let released = false;
  return {
    path,
    release: () => {
      if (released) return;
      released = true;
      db.close();
    },
  };
}
