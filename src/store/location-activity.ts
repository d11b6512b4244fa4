import type { SqliteDatabase } from "./database.js";
import { requireAbsolutePath, requireNullableText, requireTimestamp } from "./input.js";
import { guardWrite } from "./write-guard.js";

/** When a location was last active and when it may be evicted. */
export interface LocationActivity {
  directory: string;
  /** null: the location has no workspace. */
  workspace: string | null;
  activeAt: number;
  expiresAt: number;
}

interface ActivityRow extends Omit<LocationActivity, "workspace"> {
  workspace: string;
}

// The table stores "no workspace" as '' (NULLs cannot be told apart in a primary key); callers see null.
const NO_WORKSPACE = "";
const COLUMNS = "directory, workspace, active_at AS activeAt, expires_at AS expiresAt";

export class LocationActivityStore {
  readonly #upsert;
  readonly #get;
  readonly #list;
  readonly #delete;

  constructor(db: SqliteDatabase) {
    this.#upsert = db.prepare<[string, string, number, number]>(
      `INSERT INTO location_activity (directory, workspace, active_at, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (directory, workspace)
       DO UPDATE SET active_at = excluded.active_at, expires_at = excluded.expires_at`,
    );
    this.#get = db.prepare<[string, string], ActivityRow>(`SELECT ${COLUMNS} FROM location_activity WHERE directory = ? AND workspace = ?`);
    this.#list = db.prepare<[], ActivityRow>(`SELECT ${COLUMNS} FROM location_activity ORDER BY expires_at, directory, workspace`);
    this.#delete = db.prepare<[string, string]>("DELETE FROM location_activity WHERE directory = ? AND workspace = ?");
  }

  upsert(activity: LocationActivity): void {
    const op = "locationActivity.upsert";
    const directory = requireAbsolutePath(op, "directory", activity.directory);
    const workspace = toColumn(op, activity.workspace);
    const activeAt = requireTimestamp(op, "activeAt", activity.activeAt);
    const expiresAt = requireTimestamp(op, "expiresAt", activity.expiresAt);
    guardWrite(op, () => this.#upsert.run(directory, workspace, activeAt, expiresAt));
  }

  get(directory: string, workspace: string | null): LocationActivity | undefined {
    const row = this.#get.get(directory, toColumn("locationActivity.get", workspace));
    return row && fromRow(row);
  }

  /** Soonest to expire first. */
  list(): LocationActivity[] {
    return this.#list.all().map(fromRow);
  }

  /** Returns whether there was a record. */
  delete(directory: string, workspace: string | null): boolean {
    const op = "locationActivity.delete";
    const key = toColumn(op, workspace);
    return guardWrite(op, () => this.#delete.run(directory, key).changes) === 1;
  }
}

/** An empty-string workspace is refused rather than silently merged with "no workspace". */
function toColumn(op: string, workspace: string | null): string {
  return requireNullableText(op, "workspace", workspace) ?? NO_WORKSPACE;
}

function fromRow(row: ActivityRow): LocationActivity {
  return { ...row, workspace: row.workspace === NO_WORKSPACE ? null : row.workspace };
}
