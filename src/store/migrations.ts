import type { SqliteDatabase } from "./database.js";
import { StoreOpenError } from "./errors.js";

export interface Migration {
  /** The `user_version` the database has once this step is applied; steps are numbered 1, 2, 3... */
  version: number;
  description: string;
  sql: string;
}

// Append new steps at the end; never edit a step that has shipped.
export const migrations: readonly Migration[] = [
  {
    version: 1,
    description: "sessions, journal, questions, location activity, process groups, lifecycle records",
    sql: `
      CREATE TABLE sessions (
        id               TEXT PRIMARY KEY,
        agent            TEXT NOT NULL,
        cwd              TEXT NOT NULL,
        workspace        TEXT,
        title            TEXT,
        agent_session_id TEXT,
        created_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX sessions_by_recency ON sessions (updated_at DESC, created_at DESC);
      CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC, created_at DESC);

      CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        payload    TEXT NOT NULL,
        at         INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE questions (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        kind        TEXT NOT NULL CHECK (kind IN ('permission', 'elicitation')),
        request     TEXT NOT NULL,
        asked_at    INTEGER NOT NULL,
        state       TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'answered', 'cancelled', 'orphaned')),
        answer      TEXT,
        reason      TEXT,
        resolved_at INTEGER
      ) STRICT;
      CREATE INDEX questions_by_session ON questions (session_id, asked_at);
      CREATE INDEX questions_pending ON questions (asked_at) WHERE state = 'pending';

      -- '' stands for "no workspace": NULLs are all distinct, so they cannot be part of a primary key.
      CREATE TABLE location_activity (
        directory  TEXT NOT NULL,
        workspace  TEXT NOT NULL,
        active_at  INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (directory, workspace)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE process_groups (
        pgid        INTEGER PRIMARY KEY,
        kind        TEXT NOT NULL CHECK (kind IN ('agent', 'terminal', 'service')),
        label       TEXT NOT NULL,
        start_ticks INTEGER NOT NULL,
        boot_id     TEXT NOT NULL,
        started_at  INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE lifecycle_records (
        id      INTEGER PRIMARY KEY AUTOINCREMENT,
        at      INTEGER NOT NULL,
        kind    TEXT NOT NULL,
        payload TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 2,
    description: "what a session's agent was asked and reported (transparent ACP), agents' initialize answers",
    sql: `
      -- JSON: the client's session/new parameters Berth passes on to every child of the session.
      ALTER TABLE sessions ADD COLUMN agent_request TEXT;
      -- JSON: the session's modes, models, config options and commands, as the agent last reported them.
      ALTER TABLE sessions ADD COLUMN agent_state TEXT;

      CREATE TABLE agent_profiles (
        agent      TEXT PRIMARY KEY,
        command    TEXT NOT NULL,
        initialize TEXT NOT NULL,
        at         INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 3,
    description: "no location activity table: it was written every sweep and never read",
    sql: `DROP TABLE location_activity;`,
  },
  {
    version: 4,
    description: "a session may run in a git worktree of its own: where it is, its branch and base, landed or discarded",
    // JSON (see src/worktrees/): NULL for a session in a plain directory.
    sql: `ALTER TABLE sessions ADD COLUMN worktree TEXT;`,
  },
  {
    version: 5,
    description: "review comments on a session's changes, kept until sent to its agent and after",
    sql: `
      CREATE TABLE review_comments (
        id         TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        path       TEXT NOT NULL,
        line       INTEGER NOT NULL,
        side       TEXT NOT NULL,
        body       TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        sent_at    INTEGER
      ) STRICT;
      CREATE INDEX review_comments_by_session ON review_comments (session_id, created_at);
    `,
  },
  {
    version: 6,
    description: "session lists are read a page at a time: the recency indexes end in the id, the order's last tie-break",
    // Keyset pagination (sessions.page) walks these indexes from a cursor without sorting anything.
    sql: `
      DROP INDEX sessions_by_recency;
      DROP INDEX sessions_by_cwd;
      CREATE INDEX sessions_by_recency ON sessions (updated_at DESC, created_at DESC, id);
      CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC, created_at DESC, id);
    `,
  },
];

export const latestSchemaVersion = migrations.length;

function schemaVersion(db: SqliteDatabase): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/**
 * Brings the database up to {@link latestSchemaVersion}, one step per transaction so a crash leaves a
 * numbered, consistent version.
 */
export function migrate(db: SqliteDatabase): void {
  const from = schemaVersion(db);
  if (from > latestSchemaVersion) {
    throw new StoreOpenError(
      `database ${db.name} has schema version ${from}, newer than the latest this Berth knows ` +
        `(${latestSchemaVersion}); upgrade Berth or use another database file`,
    );
  }
  if (from === latestSchemaVersion) return;
  if (db.readonly) {
    throw new StoreOpenError(
      `database ${db.name} has schema version ${from} and needs migrating to ${latestSchemaVersion}, but it is open read-only`,
    );
  }
  for (const step of migrations.slice(from)) {
    // IMMEDIATE takes the write lock before re-reading the version, so two hosts never apply one step twice.
    db.transaction(() => {
      if (schemaVersion(db) >= step.version) return;
      db.exec(step.sql);
      db.pragma(`user_version = ${step.version}`);
    }).immediate();
  }
}
