import type { SqliteDatabase } from "./database.js";
import { decodeJson, encodeJson, requireCount, requireText, requireTimestamp, type Json } from "./input.js";
import { guardWrite } from "./write-guard.js";

/** Something the host did to a location, session or child, kept for operators. */
export interface LifecycleRecord {
  /** Increasing, never reused. */
  id: number;
  at: number;
  /** e.g. `location_evicted`, `session_interrupted`, `child_acquired`, `child_released`. */
  kind: string;
  payload: Json;
}

interface RecordRow extends Omit<LifecycleRecord, "payload"> {
  payload: string;
}

const COLUMNS = "id, at, kind, payload";

export class LifecycleRecordLog {
  readonly #append;
  readonly #recent;
  readonly #after;
  readonly #prune;
  readonly #lastId;

  constructor(db: SqliteDatabase) {
    this.#append = db
      .prepare<[number, string, string], number>("INSERT INTO lifecycle_records (at, kind, payload) VALUES (?, ?, ?) RETURNING id")
      .pluck();
    this.#recent = db.prepare<[number], RecordRow>(
      `SELECT ${COLUMNS} FROM (SELECT ${COLUMNS} FROM lifecycle_records ORDER BY id DESC LIMIT ?) ORDER BY id`,
    );
    this.#after = db.prepare<[number, number], RecordRow>(`SELECT ${COLUMNS} FROM lifecycle_records WHERE id > ? ORDER BY id LIMIT ?`);
    this.#prune = db.prepare<[number]>("DELETE FROM lifecycle_records WHERE at < ?");
    this.#lastId = db
      .prepare<[], number>(
        `SELECT max(coalesce((SELECT max(id) FROM lifecycle_records), 0),
                    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'lifecycle_records'), 0))`,
      )
      .pluck();
  }

  /** The highest id ever given to a record (pruned ones included): a writer that numbers records goes on after it. */
  lastId(): number {
    return this.#lastId.get() ?? 0;
  }

  /** Removes records older than `before` (ms epoch); returns how many. */
  pruneBefore(before: number): number {
    const op = "lifecycleRecords.pruneBefore";
    const cutoff = requireTimestamp(op, "before", before);
    return guardWrite(op, () => this.#prune.run(cutoff).changes);
  }

  /** Returns the new record's id. */
  append(kind: string, payload: unknown, at: number): number {
    const op = "lifecycleRecords.append";
    const values = [requireTimestamp(op, "at", at), requireText(op, "kind", kind), encodeJson(op, "payload", payload)] as const;
    return guardWrite(op, () => this.#append.get(...values) as number);
  }

  /** The newest `limit` records, oldest first (so a follower can continue with `after(last.id)`). */
  recent(limit: number): LifecycleRecord[] {
    return this.#recent.all(requireCount("lifecycleRecords.recent", "limit", limit)).map(toRecord);
  }

  /** Records newer than `id`, oldest first; at most `limit` if given. */
  after(id: number, limit?: number): LifecycleRecord[] {
    const op = "lifecycleRecords.after";
    const max = limit === undefined ? -1 : requireCount(op, "limit", limit);
    return this.#after.all(requireCount(op, "id", id), max).map(toRecord);
  }
}

function toRecord(row: RecordRow): LifecycleRecord {
  return { ...row, payload: decodeJson(row.payload) };
}
