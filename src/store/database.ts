import Database from "better-sqlite3";
import { StoreOpenError } from "./errors.js";
import { requireCount } from "./input.js";

export type SqliteDatabase = Database.Database;

export interface OpenOptions {
  /** Open without write access: every write throws a `StoreWriteError` with `SQLITE_READONLY`. */
  readonly?: boolean;
  /** How long a write waits for another connection's lock before failing with `SQLITE_BUSY`. */
  busyTimeoutMs?: number;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/** Opens (creating if needed) a SQLite file configured the way Berth relies on. */
export function openDatabase(path: string, options: OpenOptions = {}): SqliteDatabase {
  const readonly = options.readonly ?? false;
  const busyTimeoutMs = requireCount("store.open", "busyTimeoutMs", options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
  let db: SqliteDatabase | undefined;
  try {
    db = new Database(path, { readonly, fileMustExist: readonly });
    // WAL: readers never block the writer. The mode is stored in the file, so a read-only open inherits it.
    if (!readonly) db.pragma("journal_mode = WAL");
    // NORMAL under WAL survives a crash of the process (not of the machine) with no lost commit.
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    return db;
  } catch (error) {
    db?.close();
    const reason = error instanceof Database.SqliteError ? `${error.code}: ${error.message}` : (error as Error).message;
    const mode = readonly ? " read-only" : "";
    throw new StoreOpenError(`cannot open database ${path}${mode}: ${reason}`, { cause: error });
  }
}
