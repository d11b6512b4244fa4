import { StoreOpenError } from "../errors.js";
import { transaction, type Sql, type Transaction } from "./connection.js";

interface PostgresMigration {
  /** The schema version once this step is applied; steps are numbered 1, 2, 3... */
  version: number;
  description: string;
  /**
   * The oldest schema version whose Berth still runs right on a database with this step applied: the step's own
   * version, unless the step only adds what older Berths neither read nor write (an index). Stored with the step, so
   * a Berth older than the step reads it from the database: one host of a fleet can be rolled back, or upgraded
   * after the others, across such steps.
   */
  oldestReader: number;
  sql: string;
}

// Append new steps at the end; never edit a step that has shipped. Timestamps the host gives
// are integer milliseconds (bigint), as in the SQLite file; host liveness uses the server's
// clock (timestamptz), the one clock every host of a fleet shares.
const migrations: readonly PostgresMigration[] = [
  {
    version: 1,
    oldestReader: 1,
    description:
      "hosts, sessions with their lease (owner, epoch) and seq counter, journal, questions, process groups, lifecycle records, agent profiles",
    sql: `
      CREATE TABLE hosts (
        id            text PRIMARY KEY,
        url           text,
        registered_at timestamptz NOT NULL,
        heartbeat_at  timestamptz NOT NULL
      );

      -- A session's row is also its lease row: the owner, the epoch that fences writes, and the
      -- last seq drawn, so one UPDATE checks the epoch, draws seqs and locks against concurrent writers.
      CREATE TABLE sessions (
        id               text PRIMARY KEY,
        agent            text NOT NULL,
        cwd              text NOT NULL,
        workspace        text,
        title            text,
        agent_session_id text,
        agent_request    text,
        agent_state      text,
        created_at       bigint NOT NULL,
        updated_at       bigint NOT NULL,
        owner_host       text,
        epoch            bigint NOT NULL DEFAULT 1,
        last_seq         bigint NOT NULL DEFAULT 0
      );
      CREATE INDEX sessions_by_recency ON sessions (updated_at DESC, created_at DESC);
      CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC, created_at DESC);
      CREATE INDEX sessions_by_owner ON sessions (owner_host);

      CREATE TABLE events (
        session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq        bigint NOT NULL,
        kind       text NOT NULL,
        payload    text NOT NULL,
        at         bigint NOT NULL,
        PRIMARY KEY (session_id, seq)
      );

      CREATE TABLE questions (
        id          text PRIMARY KEY,
        session_id  text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        kind        text NOT NULL CHECK (kind IN ('permission', 'elicitation')),
        request     text NOT NULL,
        asked_at    bigint NOT NULL,
        state       text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'answered', 'cancelled', 'orphaned')),
        answer      text,
        reason      text,
        resolved_at bigint
      );
      CREATE INDEX questions_by_session ON questions (session_id, asked_at);
      CREATE INDEX questions_pending ON questions (asked_at) WHERE state = 'pending';

      CREATE TABLE process_groups (
        host_id     text NOT NULL,
        pgid        integer NOT NULL,
        kind        text NOT NULL CHECK (kind IN ('agent', 'terminal', 'service')),
        label       text NOT NULL,
        start_ticks bigint NOT NULL,
        boot_id     text NOT NULL,
        started_at  bigint NOT NULL,
        PRIMARY KEY (host_id, pgid)
      );

      CREATE TABLE lifecycle_records (
        id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at      bigint NOT NULL,
        kind    text NOT NULL,
        payload text NOT NULL
      );
      CREATE INDEX lifecycle_records_by_time ON lifecycle_records (at);

      CREATE TABLE agent_profiles (
        agent      text PRIMARY KEY,
        command    text NOT NULL,
        initialize text NOT NULL,
        at         bigint NOT NULL
      );
    `,
  },
  {
    version: 2,
    oldestReader: 2,
    description: "hosts' incarnations: each registration of a host id is a new process, whose predecessor can take no lease",
    sql: `ALTER TABLE hosts ADD COLUMN incarnation bigint NOT NULL DEFAULT 0;`,
  },
  {
    version: 3,
    oldestReader: 3,
    description: "each host's own TTL: it is alive, and its leases stand, by its setting, not by that of the host that looks",
    // NULL: registered by a Berth before this step; judged by the looking host's TTL until it registers again.
    sql: `ALTER TABLE hosts ADD COLUMN ttl_ms bigint;`,
  },
  {
    version: 4,
    oldestReader: 4,
    description: "a session may run in a git worktree of its own: where it is, its branch and base, landed or discarded",
    // JSON (see src/worktrees/): NULL for a session in a plain directory.
    sql: `ALTER TABLE sessions ADD COLUMN worktree text;`,
  },
  {
    version: 5,
    oldestReader: 5,
    description: "review comments on a session's changes, kept until sent to its agent and after",
    sql: `
      CREATE TABLE review_comments (
        id         text PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        path       text NOT NULL,
        line       integer NOT NULL,
        side       text NOT NULL,
        body       text NOT NULL,
        created_at bigint NOT NULL,
        sent_at    bigint
      );
      CREATE INDEX review_comments_by_session ON review_comments (session_id, created_at);
    `,
  },
  {
    version: 6,
    oldestReader: 5,
    description: "session lists are read a page at a time: the recency indexes end in the id, the order's last tie-break",
    sql: `
      DROP INDEX sessions_by_recency;
      DROP INDEX sessions_by_cwd;
      CREATE INDEX sessions_by_recency ON sessions (updated_at DESC, created_at DESC, id);
      CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC, created_at DESC, id);
    `,
  },
];

const latestVersion = migrations.length;

/**
 * Brings the database up to the latest schema, every step in one transaction. Hosts of a fleet start
 * together: an advisory lock makes one of them migrate while the others wait, then find it done.
 */
export async function migratePostgres(sql: Sql): Promise<void> {
  await transaction(sql, async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('berth.migrate'))`;
    await tx`CREATE TABLE IF NOT EXISTS berth_schema (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), oldest_reader integer)`;
    await recordOldestReaders(tx);
    // A step with no oldest reader recorded counts as needing a Berth that knows it.
    const [row] = await tx<{ version: number | null; needs: number | null }[]>`
      SELECT max(version) AS version, max(coalesce(oldest_reader, version)) FILTER (WHERE version > ${latestVersion}) AS needs
      FROM berth_schema`;
    const from = row?.version ?? 0;
    const needs = row?.needs ?? 0;
    if (needs > latestVersion) {
      throw new StoreOpenError(
        `the PostgreSQL database has Berth schema version ${from}, newer than the latest this Berth knows (${latestVersion}), ` +
          `and it needs a Berth that knows version ${needs} or later; upgrade Berth`,
      );
    }
    for (const step of migrations.slice(from)) {
      await tx.unsafe(step.sql);
      await tx`INSERT INTO berth_schema (version, description, oldest_reader) VALUES (${step.version}, ${step.description}, ${step.oldestReader})`;
    }
  });
}

/**
 * A database migrated before steps recorded their oldest reader gets the column, and the steps this Berth knows get
 * theirs. Only then: an `ALTER TABLE` takes the table's exclusive lock and needs its owner, which a start must not
 * (a backup reading the table would hold every host's start, and the advisory lock with it).
 */
async function recordOldestReaders(tx: Transaction): Promise<void> {
  const [column] = await tx`
    SELECT 1 FROM pg_attribute WHERE attrelid = 'berth_schema'::regclass AND attname = 'oldest_reader' AND NOT attisdropped`;
  if (!column) await tx`ALTER TABLE berth_schema ADD COLUMN oldest_reader integer`;
  const [missing] = await tx<{ count: number }[]>`
    SELECT count(*)::int AS count FROM berth_schema WHERE oldest_reader IS NULL AND version <= ${latestVersion}`;
  if (!missing?.count) return;
  for (const step of migrations) {
    await tx`UPDATE berth_schema SET oldest_reader = ${step.oldestReader} WHERE version = ${step.version} AND oldest_reader IS NULL`;
  }
}
