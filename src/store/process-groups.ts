import type { LedgerEntry, ProcessGroupLedger, ProcessKind } from "../processes/ledger.js";
import type { SqliteDatabase } from "./database.js";
import { StoreInputError } from "./errors.js";
import { requireCount, requireOneOf, requireText, requireTimestamp } from "./input.js";
import { guardWrite } from "./write-guard.js";

const processGroupKinds: readonly ProcessKind[] = ["agent", "terminal", "service"];

export class SqliteProcessGroupLedger implements ProcessGroupLedger {
  readonly #add;
  readonly #delete;
  readonly #list;

  constructor(db: SqliteDatabase) {
    // A pgid can only belong to one live group: adding it again replaces the stale record.
    this.#add = db.prepare<LedgerEntry>(
      `INSERT OR REPLACE INTO process_groups (pgid, kind, label, start_ticks, boot_id, started_at)
       VALUES (@pgid, @kind, @label, @startTicks, @bootId, @startedAt)`,
    );
    this.#delete = db.prepare<[number]>("DELETE FROM process_groups WHERE pgid = ?");
    this.#list = db.prepare<[], LedgerEntry>(
      `SELECT pgid, kind, label, start_ticks AS startTicks, boot_id AS bootId, started_at AS startedAt
       FROM process_groups ORDER BY started_at, pgid`,
    );
  }

  add(group: LedgerEntry): void {
    const op = "processGroups.add";
    const row: LedgerEntry = {
      pgid: requirePgid(op, group.pgid),
      kind: requireOneOf(op, "kind", group.kind, processGroupKinds),
      label: requireText(op, "label", group.label),
      startTicks: requireCount(op, "startTicks", group.startTicks),
      bootId: requireText(op, "bootId", group.bootId),
      startedAt: requireTimestamp(op, "startedAt", group.startedAt),
    };
    guardWrite(op, () => this.#add.run(row));
  }

  /** Deleting a pgid that is not in the ledger is a no-op: a group may be stopped twice. */
  delete(pgid: number): void {
    const op = "processGroups.delete";
    const id = requirePgid(op, pgid);
    guardWrite(op, () => this.#delete.run(id));
  }

  /** Oldest first. */
  list(): LedgerEntry[] {
    return this.#list.all();
  }
}

/** pgid 0 and 1 would make `kill(-pgid)` hit the caller's own group or every process. */
function requirePgid(op: string, pgid: unknown): number {
  const value = requireCount(op, "pgid", pgid);
  if (value < 2) throw new StoreInputError(op, `pgid must be greater than 1, got ${value}`);
  return value;
}
