import type { SqliteDatabase } from "./database.js";

/**
 * What the host's one writer stores, as flat values so a batch crosses to the writer thread
 * as one array of strings and numbers (no object graph to clone, no JSON to re-encode there).
 *
 * A batch is a sequence of units; a unit is stored whole or not at all. A unit is its op
 * count followed by its ops, each op exactly {@link OP_WIDTH} values: a code and five fields.
 *
 * | code | fields |
 * |---|---|
 * | `e` event | sessionId, seq, kind, payload (JSON text, stored as it came), at |
 * | `q` question asked | id, sessionId, kind, request (JSON text), askedAt |
 * | `t` session touched | sessionId, at |
 * | `n` session titled (only if it has none) | sessionId, title |
 * | `r` lifecycle record | id, kind, payload (JSON text), at |
 */
export type WriteValue = string | number | null;
const OP_WIDTH = 6;

class UnitRefusedError extends Error {
  override readonly name = "UnitRefusedError";
}

export interface BatchResult {
  /** Indexes (in the batch) of the units that were not stored, with why. */
  readonly failed: ReadonlyArray<{ readonly unit: number; readonly error: string }>;
}

/** Applies batches on one connection: one transaction per batch; if it fails, each unit alone. */
export class BatchApplier {
  readonly #db;
  readonly #event;
  readonly #question;
  readonly #touch;
  readonly #title;
  readonly #record;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#event = db.prepare<[string, number, string, string, number]>(
      "INSERT INTO events (session_id, seq, kind, payload, at) VALUES (?, ?, ?, ?, ?)",
    );
    this.#question = db.prepare<[string, string, string, number, string]>(
      `INSERT INTO questions (id, session_id, kind, request, asked_at)
       SELECT ?, id, ?, ?, ? FROM sessions WHERE id = ?`,
    );
    this.#touch = db.prepare<[number, string]>("UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?");
    this.#title = db.prepare<[string, string]>("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL");
    this.#record = db.prepare<[number, number, string, string]>("INSERT INTO lifecycle_records (id, at, kind, payload) VALUES (?, ?, ?, ?)");
  }

  apply(values: readonly WriteValue[]): BatchResult {
    const units = unitStarts(values);
    try {
      this.#db
        .transaction(() => {
          for (const start of units) this.#unit(values, start);
        })
        .immediate();
      return { failed: [] };
    } catch {
      // Something in the batch cannot be stored (a session deleted meanwhile, a full disk):
      // each unit alone, in its own savepoint, so one bad unit costs only itself.
      const failed: Array<{ unit: number; error: string }> = [];
      try {
        this.#db
          .transaction(() => {
            units.forEach((start, unit) => {
              try {
                this.#db.transaction(() => this.#unit(values, start))();
              } catch (error) {
                failed.push({ unit, error: messageOf(error) });
              }
            });
          })
          .immediate();
      } catch (error) {
        return { failed: units.map((_, unit) => ({ unit, error: messageOf(error) })) };
      }
      return { failed };
    }
  }

  #unit(values: readonly WriteValue[], start: number): void {
    const count = values[start] as number;
    for (let op = 0; op < count; op++) {
      const at = start + 1 + op * OP_WIDTH;
      const code = values[at];
      const a = values[at + 1];
      const b = values[at + 2];
      const c = values[at + 3];
      const d = values[at + 4];
      const e = values[at + 5];
      switch (code) {
        case "e":
          this.#event.run(a as string, b as number, c as string, d as string, e as number);
          break;
        case "q":
          if (this.#question.run(a as string, c as string, d as string, e as number, b as string).changes === 0) {
            throw new UnitRefusedError(`no session "${String(b)}" for question "${String(a)}"`);
          }
          break;
        case "t":
          this.#touch.run(b as number, a as string);
          break;
        case "n":
          this.#title.run(b as string, a as string);
          break;
        case "r":
          this.#record.run(a as number, d as number, b as string, c as string);
          break;
        default:
          throw new UnitRefusedError(`unknown write op ${String(code)}`);
      }
    }
  }
}

function unitStarts(values: readonly WriteValue[]): number[] {
  const starts: number[] = [];
  for (let at = 0; at < values.length; at += 1 + (values[at] as number) * OP_WIDTH) starts.push(at);
  return starts;
}

function messageOf(error: unknown): string {
  if (error && typeof error === "object" && "code" in error && typeof error.code === "string")
    return `${error.code}: ${(error as unknown as Error).message}`;
  return error instanceof Error ? error.message : String(error);
}
