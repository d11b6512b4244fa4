import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { OpenOptions } from "../../src/store/database.js";
import { Store } from "../../src/store/store.js";

/** Temp database files and stores for one test file; everything is closed and deleted after each test. */
export function useStoreFiles() {
  const dirs: string[] = [];
  const closables: { close(): unknown }[] = [];

  afterEach(() => {
    for (const item of closables.splice(0)) item.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  return {
    /** A path in a fresh temp directory; the file does not exist yet. */
    path(): string {
      const dir = mkdtempSync(join(tmpdir(), "berth-store-"));
      dirs.push(dir);
      return join(dir, "berth.db");
    },
    open(path: string, options?: OpenOptions): Store {
      const store = Store.open(path, options);
      closables.push(store);
      return store;
    },
    /** A plain connection, to look at the file the way SQLite sees it. */
    raw(path: string, options?: Database.Options): Database.Database {
      const db = new Database(path, options);
      closables.push(db);
      return db;
    },
    /** Registers something else to close after the test (e.g. a store made with `Store.fromDatabase`). */
    own<T extends { close(): unknown }>(item: T): T {
      closables.push(item);
      return item;
    },
  };
}

export const T0 = Date.UTC(2025, 0, 1);

export function newSession(store: Store, id: string, overrides: { cwd?: string; createdAt?: number } = {}) {
  return store.sessions.create({ id, agent: "demo", cwd: overrides.cwd ?? "/work/project", createdAt: overrides.createdAt ?? T0 });
}

/** The error `action` throws; fails the test if it throws none. */
export function catchError(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error, none was thrown");
}
