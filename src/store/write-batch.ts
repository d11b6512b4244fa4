import { CodedError } from "../protocol/coded-error.js";
import type { LedgerEntry } from "../processes/ledger.js";
import { AgentProfileStore, type AgentProfile } from "./agent-profiles.js";
import type { SqliteDatabase } from "./database.js";
import { LifecycleRecordLog } from "./lifecycle-records.js";
import { SqliteProcessGroupLedger } from "./process-groups.js";
import { QuestionStore, type QuestionOutcome } from "./questions.js";
import { ReviewCommentStore, type NewReviewComment } from "./review-comments.js";
import { SessionStore, type NewSession } from "./sessions.js";

/**
 * What the host's one writer stores, as flat values so a batch crosses to the writer thread
 * as one array of strings and numbers (no object graph to clone, no JSON to re-encode there).
 *
 * A batch is a sequence of units; a unit is stored whole or not at all. A unit is its op
 * count followed by its ops, each op exactly {@link OP_WIDTH} values: a code and five fields.
 *
 * | code | fields |
 * |---|---|
 * | `e` event | sessionId, seq, kind, payload (JSON text, stored as it is), at |
 * | `q` question asked | id, sessionId, kind, request (JSON text), askedAt |
 * | `t` session touched | sessionId, at |
 * | `n` session titled (only if it has none) | sessionId, title |
 * | `r` lifecycle record | id, kind, payload (JSON text), at |
 * | `c` a rarer write, by name (see {@link StoreCalls}) | name, arguments (a JSON array) |
 *
 * A unit's result is what its last `c` op returned (nothing if it has none).
 */
export type WriteValue = string | number | null;
const OP_WIDTH = 6;

/** One write op: a code and five fields. */
export type WriteOp = readonly [code: string, WriteValue, WriteValue, WriteValue, WriteValue, WriteValue];

/** The rarer writes, each a method of the store run on the writer's connection. */
export interface StoreCalls {
  "sessions.create": (session: NewSession) => void;
  "sessions.delete": (id: string) => boolean;
  "sessions.setAgentState": (id: string, state: object | null) => void;
  "sessions.setTitle": (id: string, title: string | null) => void;
  "sessions.setAgentSessionId": (id: string, agentSessionId: string | null) => void;
  "sessions.setAgentRequest": (id: string, request: object | null) => void;
  "sessions.setWorktree": (id: string, worktree: object | null) => void;
  "questions.resolve": (id: string, state: QuestionOutcome, answerOrReason: unknown, at: number) => boolean;
  "processGroups.add": (group: LedgerEntry) => void;
  "processGroups.delete": (pgid: number) => void;
  "agentProfiles.put": (profile: AgentProfile) => void;
  "lifecycleRecords.pruneBefore": (before: number) => number;
  "reviewComments.add": (comment: NewReviewComment) => void;
  "reviewComments.edit": (id: string, body: string) => boolean;
  "reviewComments.delete": (id: string) => boolean;
  "reviewComments.markSent": (ids: readonly string[], at: number) => number;
}

export type StoreCallName = keyof StoreCalls;

class UnitRefusedError extends Error {
  override readonly name = "UnitRefusedError";
}

/**
 * SQLite could not write at all, for now: another connection holds the write lock, the disk is
 * full, the file or its directory is read-only, an I/O error. Nothing of the batch was stored;
 * the same batch can be applied again later. `code` is the SQLite code, e.g. `SQLITE_BUSY`, `SQLITE_FULL`.
 */
export class StoreBlockedError extends CodedError<string> {
  override readonly name = "StoreBlockedError";
}

/** Codes that say "not now" about the database as a whole, never "not this row". */
const BLOCKING_CODE = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|PROTOCOL|NOMEM)/;

/** The {@link StoreBlockedError} an error is, if SQLite refused to write for now rather than refused the data. */
function blockedBy(error: unknown): StoreBlockedError | undefined {
  if (error instanceof StoreBlockedError) return error;
  const { code } = codeOf(error);
  return code && BLOCKING_CODE.test(code) ? new StoreBlockedError(code, (error as Error).message) : undefined;
}

export interface BatchResult {
  /**
   * Indexes (in the batch) of the units that were not stored, with why; `lost`: the unit's session
   * belongs to another host now (a fleet), so it was refused as expected.
   */
  readonly failed: ReadonlyArray<{ readonly unit: number; readonly error: string; readonly code?: string; readonly lost?: boolean }>;
  /** By unit index, what its last `c` op returned (absent for units without one). */
  readonly results?: ReadonlyArray<unknown>;
}

/**
 * Applies batches on one connection: one transaction per batch; if it fails, each unit alone.
 * Throws {@link StoreBlockedError} (nothing stored) when SQLite cannot write at all for now.
 */
export class BatchApplier {
  readonly #db;
  readonly #event;
  readonly #question;
  readonly #touch;
  readonly #title;
  readonly #record;
  readonly #calls: StoreCalls;

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
    const sessions = new SessionStore(db);
    const questions = new QuestionStore(db);
    const groups = new SqliteProcessGroupLedger(db);
    const profiles = new AgentProfileStore(db);
    const records = new LifecycleRecordLog(db);
    const comments = new ReviewCommentStore(db);
    this.#calls = {
      "sessions.create": (session) => {
        sessions.create(session);
      },
      "sessions.delete": (id) => sessions.delete(id),
      "sessions.setAgentState": (id, state) => sessions.setAgentState(id, state),
      "sessions.setTitle": (id, title) => sessions.setTitle(id, title),
      "sessions.setAgentSessionId": (id, agentSessionId) => sessions.setAgentSessionId(id, agentSessionId),
      "sessions.setAgentRequest": (id, request) => sessions.setAgentRequest(id, request),
      "sessions.setWorktree": (id, worktree) => sessions.setWorktree(id, worktree),
      "questions.resolve": (id, state, answerOrReason, at) =>
        state === "answered" ? questions.resolve(id, "answered", answerOrReason, at) : questions.resolve(id, state, answerOrReason as string, at),
      "processGroups.add": (group) => groups.add(group),
      "processGroups.delete": (pgid) => groups.delete(pgid),
      "agentProfiles.put": (profile) => profiles.put(profile),
      "lifecycleRecords.pruneBefore": (before) => records.pruneBefore(before),
      "reviewComments.add": (comment) => comments.add(comment),
      "reviewComments.edit": (id, body) => comments.edit(id, body),
      "reviewComments.delete": (id) => comments.delete(id),
      "reviewComments.markSent": (ids, at) => comments.markSent(ids, at),
    };
  }

  apply(values: readonly WriteValue[]): BatchResult {
    const units = unitStarts(values);
    const results: unknown[] = [];
    try {
      this.#db
        .transaction(() => {
          for (const [unit, start] of units.entries()) this.#unit(values, start, unit, results);
        })
        .immediate();
      return { failed: [], results };
    } catch (error) {
      const blocked = blockedBy(error);
      if (blocked) throw blocked;
      // Something in the batch cannot be stored (a session deleted meanwhile): each unit alone,
      // in its own savepoint, so one bad unit costs only itself.
      results.length = 0;
      const failed: Array<{ unit: number; error: string; code?: string }> = [];
      try {
        this.#db
          .transaction(() => {
            units.forEach((start, unit) => {
              try {
                this.#db.transaction(() => this.#unit(values, start, unit, results))();
              } catch (error) {
                if (blockedBy(error)) throw error;
                failed.push({ unit, error: messageOf(error), ...codeOf(error) });
              }
            });
          })
          .immediate();
      } catch (error) {
        const blocked = blockedBy(error);
        if (blocked) throw blocked;
        return { failed: units.map((_, unit) => ({ unit, error: messageOf(error), ...codeOf(error) })) };
      }
      return { failed, results };
    }
  }

  #unit(values: readonly WriteValue[], start: number, unit: number, results: unknown[]): void {
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
        case "c":
          results[unit] = this.#call(a as string, b as string) ?? null;
          break;
        default:
          throw new UnitRefusedError(`unknown write op ${String(code)}`);
      }
    }
  }

  #call(name: string, args: string): unknown {
    if (!Object.hasOwn(this.#calls, name)) throw new UnitRefusedError(`unknown store call ${JSON.stringify(name)}`);
    const call = this.#calls[name as StoreCallName] as (...values: unknown[]) => unknown;
    return call(...(JSON.parse(args) as unknown[]));
  }
}

/** A `c` op: a store method by name, its arguments as JSON. */
export function callOp<N extends StoreCallName>(name: N, args: Parameters<StoreCalls[N]>): WriteOp {
  return ["c", name, JSON.stringify(args), null, null, null];
}

/** A batch's units, each as its ops (what `WriteQueue` flattened). */
export function unitsOf(values: readonly WriteValue[]): WriteOp[][] {
  return unitStarts(values).map((start) =>
    Array.from({ length: values[start] as number }, (_, op) => {
      const at = start + 1 + op * OP_WIDTH;
      return values.slice(at, at + OP_WIDTH) as unknown as WriteOp;
    }),
  );
}

/** Units of ops as a batch's flat values. */
export function flatten(units: readonly (readonly WriteOp[])[]): WriteValue[] {
  const values: WriteValue[] = [];
  for (const ops of units) {
    values.push(ops.length);
    for (const op of ops) values.push(...op);
  }
  return values;
}

function unitStarts(values: readonly WriteValue[]): number[] {
  const starts: number[] = [];
  for (let at = 0; at < values.length; at += 1 + (values[at] as number) * OP_WIDTH) starts.push(at);
  return starts;
}

/** The SQLite code of a refusal, if it has one (`SQLITE_CONSTRAINT_PRIMARYKEY`...). */
function codeOf(error: unknown): { code?: string } {
  return error && typeof error === "object" && "code" in error && typeof error.code === "string" ? { code: error.code } : {};
}

export function messageOf(error: unknown): string {
  const { code } = codeOf(error);
  if (code) return `${code}: ${(error as Error).message}`;
  return error instanceof Error ? error.message : String(error);
}
