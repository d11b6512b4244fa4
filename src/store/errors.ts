/** A write was refused by SQLite (disk full, read-only file, constraint, busy...). Nothing was stored. */
export class StoreWriteError extends Error {
  override readonly name = "StoreWriteError";
  constructor(
    /** The store operation that failed, e.g. `events.append`. */
    readonly operation: string,
    /** The SQLite error code, e.g. `SQLITE_FULL`, `SQLITE_READONLY`. */
    readonly code: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`${operation} failed with ${code}: ${detail}`, options);
  }
}

/** An argument was malformed: the message names the operation and the field. */
export class StoreInputError extends Error {
  override readonly name = "StoreInputError";
  constructor(
    readonly operation: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${operation}: ${message}`, options);
  }
}

/** The operation referred to a row that does not exist. */
export class StoreNotFoundError extends Error {
  override readonly name = "StoreNotFoundError";
  constructor(
    readonly operation: string,
    readonly entity: "session" | "question",
    readonly id: string,
  ) {
    super(`${operation}: no ${entity} with id ${JSON.stringify(id)}`);
  }
}

/** The database file cannot be opened or used by this build: missing, unreadable, schema too new... */
export class StoreOpenError extends Error {
  override readonly name = "StoreOpenError";
}
