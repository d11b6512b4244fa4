import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { StoreOpenError, StoreWriteError } from "../../src/store/errors.js";
import { latestSchemaVersion, migrate, migrations } from "../../src/store/migrations.js";
import { Store } from "../../src/store/store.js";
import { catchError, newSession, useStoreFiles } from "./fixture.js";

const files = useStoreFiles();

const TABLES = ["agent_profiles", "events", "lifecycle_records", "process_groups", "questions", "review_comments", "sessions"];

function tablesOf(path: string): string[] {
  const db = files.raw(path, { readonly: true });
  return db.prepare<[], string>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all();
}

describe("migrations", () => {
  it("are numbered 1, 2, 3... without gaps", () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    expect(latestSchemaVersion).toBe(migrations.length);
  });

  it("create the whole schema in an empty file", () => {
    const path = files.path();
    files.open(path).close();
    expect(tablesOf(path)).toEqual(TABLES);
    expect(files.raw(path).pragma("user_version", { simple: true })).toBe(latestSchemaVersion);
  });

  it("leave an up-to-date file alone on re-open and keep its data", () => {
    const path = files.path();
    const first = files.open(path);
    newSession(first, "s1");
    first.events.append("s1", "prompt", { text: "hi" }, 1);
    first.close();

    // Read-only: a step that ran would throw (a read-only file that needs migrating is refused).
    const readOnly = openDatabase(path, { readonly: true });
    expect(() => migrate(readOnly)).not.toThrow();
    readOnly.close();
    const again = files.own(Store.fromDatabase(openDatabase(path)));
    expect(again.events.read("s1").map((e) => e.payload)).toEqual([{ text: "hi" }]);
  });

  it("refuse a database from a newer Berth, without touching it", () => {
    const path = files.path();
    files.open(path).close();
    const raw = files.raw(path);
    raw.pragma(`user_version = ${latestSchemaVersion + 1}`);
    raw.close();

    expect(() => Store.open(path)).toThrow(StoreOpenError);
    expect(() => Store.open(path)).toThrow(`schema version ${latestSchemaVersion + 1}, newer than`);
    expect(files.raw(path).pragma("user_version", { simple: true })).toBe(latestSchemaVersion + 1);
  });

  it("refuse to open read-only a file that still needs migrating", () => {
    const path = files.path();
    files.raw(path).close(); // an empty SQLite file at version 0
    expect(() => Store.open(path, { readonly: true })).toThrow(/needs migrating to \d+, but it is open read-only/);
  });

  it("apply each step in a transaction: a failing step leaves the version and schema as they were", () => {
    const path = files.path();
    const raw = files.raw(path);
    raw.exec("CREATE TABLE events (foreign_thing TEXT)"); // someone else's table in the way
    raw.close();

    const error = catchError(() => Store.open(path));
    expect(error).toBeInstanceOf(StoreWriteError);
    expect((error as StoreWriteError).operation).toBe("store.migrate");
    expect((error as StoreWriteError).code).toBe("SQLITE_ERROR");
    expect(tablesOf(path)).toEqual(["events"]);
    expect(files.raw(path).pragma("user_version", { simple: true })).toBe(0);
  });
});

describe("openDatabase", () => {
  it("configures WAL, synchronous NORMAL, foreign keys and a busy timeout", () => {
    const db = files.own(openDatabase(files.path(), { busyTimeoutMs: 1234 }));
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(db.pragma("busy_timeout", { simple: true })).toBe(1234);
  });

  it("names the file it cannot open", () => {
    const missing = `${files.path()}.missing`;
    expect(() => openDatabase(missing, { readonly: true })).toThrow(`cannot open database ${missing} read-only: SQLITE_CANTOPEN`);
    expect(() => openDatabase("/nonexistent-dir/berth.db")).toThrow(StoreOpenError);
    const notSqlite = files.path();
    writeFileSync(notSqlite, "this is not a database, just a long enough line of plain text to be read as a header");
    expect(() => openDatabase(notSqlite)).toThrow(`cannot open database ${notSqlite}: SQLITE_NOTADB`);
  });

  it("rejects a bad busy timeout by name", () => {
    expect(() => openDatabase(files.path(), { busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs must be a non-negative integer/);
  });
});
