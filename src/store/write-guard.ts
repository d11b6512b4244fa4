import Database from "better-sqlite3";
import { StoreWriteError } from "./errors.js";

/**
 * Runs one store write, turning a SQLite failure into a {@link StoreWriteError} naming the operation.
 * Callers wrap multi-statement writes in a transaction inside `write`, so a failure leaves nothing half-done.
 */
export function guardWrite<T>(operation: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (error instanceof Database.SqliteError) {
      throw new StoreWriteError(operation, error.code, error.message, { cause: error });
    }
    throw error;
  }
}
