import postgres from "postgres";
import type { LedgerEntry, ProcessKind } from "../../processes/ledger.js";
import type { AgentProfile } from "../agent-profiles.js";
import { StoreInputError, StoreNotFoundError, StoreOpenError, StoreWriteError } from "../errors.js";
import { toEvent, type EventRow, type JournalEvent, type ReadOptions, type ReplayOptions } from "../events.js";
import {
  decodeJson,
  encodeJson,
  requireCount,
  requireNullableText,
  requireOneOf,
  requireSessionKey,
  requireText,
  requireTimestamp,
} from "../input.js";
import type { LifecycleRecord } from "../lifecycle-records.js";
import type { Question } from "../questions.js";
import { checkedComment, type NewReviewComment, type ReviewComment } from "../review-comments.js";
import { checkedNewSession, type NewSession, type Session, type SessionPageQuery } from "../sessions.js";
import {
  encodeWriteUnit,
  HostSupersededError,
  LeaseHeldError,
  StaleEpochError,
  type HostInfo,
  type Lease,
  type QuestionResolution,
  type SessionChanges,
  type EncodedUnit,
  type SessionRead,
  type StoreBackend,
  type StoreChange,
  type UnitOutcome,
  type WriteUnit,
} from "../store-backend.js";
import { redactUrl } from "../../config/store-url.js";
import { connect, transaction, type Sql, type Transaction } from "./connection.js";
import { migratePostgres } from "./migrations.js";

export interface PostgresBackendOptions {
  /** A host whose heartbeat is older than this has lost its leases to whoever takes them (default 30 s). */
  readonly hostTtlMs?: number;
  /** Connections in the pool (default 10); `subscribe` uses one more. */
  readonly maxConnections?: number;
}

/** The channel `LISTEN/NOTIFY` wakes other hosts on; each payload is one {@link StoreChange} as JSON, or an array of them. */
const CHANNEL = "berth_changes";
/** PostgreSQL refuses a `NOTIFY` payload of 8000 bytes or more: a journal transaction's changes past this take more than one. */
const MAX_PAYLOAD_BYTES = 7_900;
const DEFAULT_HOST_TTL_MS = 30_000;
const DEFAULT_PAGE_SIZE = 1_000;
const SESSION_COLUMNS = `id, agent, cwd, workspace, title, agent_session_id AS "agentSessionId", agent_request AS "agentRequest",
  agent_state AS "agentState", worktree, created_at AS "createdAt", updated_at AS "updatedAt"`;
const QUESTION_COLUMNS = `id, session_id AS "sessionId", kind, request, asked_at AS "askedAt", state, answer, reason, resolved_at AS "resolvedAt"`;
const COMMENT_COLUMNS = `id, session_id AS "sessionId", path, line, side, body, created_at AS "createdAt", sent_at AS "sentAt"`;
const HOST_COLUMNS = `id, url, incarnation, (extract(epoch FROM registered_at) * 1000)::int8 AS "registeredAt",
  (extract(epoch FROM heartbeat_at) * 1000)::int8 AS "heartbeatAt"`;
const processKinds: readonly ProcessKind[] = ["agent", "terminal", "service"];

interface SessionRow extends Omit<Session, "agentRequest" | "agentState" | "worktree"> {
  agentRequest: string | null;
  agentState: string | null;
  worktree: string | null;
}
interface QuestionRow extends Omit<Question, "request" | "answer"> {
  request: string;
  answer: string | null;
}

/**
 * The store in a PostgreSQL database shared by a fleet of hosts (docs/fleet.md). Each session's
 * row is its lease: the owner, the epoch that fences writes, and the last seq drawn. A journal
 * write is one statement that checks the epoch, draws the seqs under the row's lock and inserts
 * the events (and a question), so it is atomic, gapless and fenced in one round trip; a batch of
 * units is one transaction. Every change is announced with `NOTIFY` in its own transaction (a batch
 * with one for all its sessions), so other hosts hear of it only once it is committed.
 */
export class PostgresBackend implements StoreBackend {
  readonly kind = "postgres";
  /** The incarnation this object (one process) registered each host id under: its later calls for that id are checked against it. */
  private readonly incarnations = new Map<string, number>();

  private constructor(
    private readonly sql: Sql,
    private readonly hostTtlMs: number,
  ) {}

  /** Connects and brings the schema up to date. */
  static async open(url: string, options: PostgresBackendOptions = {}): Promise<PostgresBackend> {
    const hostTtlMs = requireCount("store.open", "hostTtlMs", options.hostTtlMs ?? DEFAULT_HOST_TTL_MS);
    const sql = connect(url, { max: options.maxConnections ?? 10 });
    try {
      await migratePostgres(sql);
    } catch (error) {
      await sql.end({ timeout: 1 });
      if (error instanceof StoreOpenError) throw error;
      throw new StoreOpenError(`cannot open the PostgreSQL store ${redactUrl(url)}: ${(error as Error).message}`, { cause: error });
    }
    return new PostgresBackend(sql, hostTtlMs);
  }

  // Hosts and ownership.

  async registerHost(host: { id: string; url: string | null }): Promise<HostInfo> {
    const op = "hosts.register";
    const id = requireText(op, "id", host.id);
    const url = requireNullableText(op, "url", host.url);
    // One transaction: the new incarnation and the raised epochs of what the id owns are seen together.
    const row = await this.guard(op, () =>
      transaction(this.sql, async (tx) => {
        const [registered] = await tx<Omit<HostInfo, "alive">[]>`
          INSERT INTO hosts (id, url, registered_at, heartbeat_at, incarnation, ttl_ms)
          VALUES (${id}, ${url}, clock_timestamp(), clock_timestamp(), 1, ${this.hostTtlMs})
          ON CONFLICT (id) DO UPDATE SET url = excluded.url, registered_at = excluded.registered_at, heartbeat_at = excluded.heartbeat_at,
            incarnation = hosts.incarnation + 1, ttl_ms = excluded.ttl_ms
          RETURNING ${this.sql.unsafe(HOST_COLUMNS)}`;
        await tx`
          UPDATE sessions SET epoch = epoch + 1 WHERE owner_host = ${id}
          RETURNING pg_notify(${CHANNEL}, json_build_object('type', 'lease', 'sessionId', id, 'hostId', owner_host, 'epoch', epoch)::text)`;
        return registered!;
      }),
    );
    this.incarnations.set(id, row.incarnation);
    return { ...row, alive: true };
  }

  async heartbeat(hostId: string): Promise<boolean> {
    const op = "hosts.heartbeat";
    const id = requireText(op, "hostId", hostId);
    const rows = await this.guard(
      op,
      () => this.sql`UPDATE hosts SET heartbeat_at = clock_timestamp() WHERE id = ${id} AND ${this.currentIncarnation(id)}`,
    );
    return rows.count === 1;
  }

  async listHosts(): Promise<HostInfo[]> {
    return this.sql<HostInfo[]>`
      SELECT ${this.sql.unsafe(HOST_COLUMNS)}, ${this.alive()} AS alive
      FROM hosts ORDER BY id`;
  }

  /**
   * Whether the host of a `hosts` row (the table named `table` in the query) heartbeats: within its own TTL, on the
   * server's clock; a host registered by a Berth without stored TTLs, within this host's.
   */
  private alive(table: "hosts" | "h" = "hosts") {
    const row = this.sql(table);
    return this.sql`${row}.heartbeat_at > clock_timestamp() - coalesce(${row}.ttl_ms, ${this.hostTtlMs}::int8) * interval '1 millisecond'`;
  }

  async acquireLease(sessionId: string, hostId: string): Promise<Lease> {
    const op = "leases.acquire";
    const id = requireText(op, "sessionId", sessionId);
    const host = requireText(op, "hostId", hostId);
    // Taken only from no one, from `host` itself or from a host whose heartbeat is older than the TTL, on the server's
    // clock; never by a superseded incarnation of `host`. Always at a new epoch, in one statement: giving up the
    // session's current lease, if that commits first, leaves it no one's (taken from there); if after, it matches
    // nothing, so the lease returned is never given up under its taker.
    const [taken] = await this.guard(
      op,
      () => this.sql<Lease[]>`
        UPDATE sessions s SET owner_host = ${host}, epoch = s.epoch + 1
        WHERE s.id = ${id} AND (
          s.owner_host IS NULL OR s.owner_host = ${host} OR NOT EXISTS (
            SELECT 1 FROM hosts h
            WHERE h.id = s.owner_host AND ${this.alive("h")}))
          AND ${this.currentIncarnation(host)}
        RETURNING s.id AS "sessionId", s.owner_host AS "hostId", s.epoch,
          pg_notify(${CHANNEL}, json_build_object('type', 'lease', 'sessionId', s.id, 'hostId', s.owner_host, 'epoch', s.epoch)::text)`,
    );
    if (taken) return { sessionId: taken.sessionId, hostId: taken.hostId, epoch: taken.epoch };
    // One statement: the lease and whether this incarnation is still the host's, from one snapshot.
    const [current] = await this.sql<(Lease & { current: boolean })[]>`
      SELECT id AS "sessionId", owner_host AS "hostId", epoch, ${this.currentIncarnation(host)} AS current FROM sessions WHERE id = ${id}`;
    if (!current) throw new StoreNotFoundError(op, "session", id);
    if (!current.current) throw new HostSupersededError(op, host, this.incarnations.get(host)!);
    // Released or taken by `host` after the statement read the row: taken from there.
    if (current.hostId === null || current.hostId === host) return this.acquireLease(id, host);
    // Another host owns it and heartbeats.
    throw new LeaseHeldError(id, { sessionId: current.sessionId, hostId: current.hostId, epoch: current.epoch });
  }

  async giveUpLease(lease: Lease): Promise<void> {
    const op = "leases.giveUp";
    const rows = await this.guard(
      op,
      () => this.sql`
        UPDATE sessions SET owner_host = NULL, epoch = epoch + 1 WHERE id = ${lease.sessionId} AND epoch = ${lease.epoch}
        RETURNING pg_notify(${CHANNEL}, json_build_object('type', 'lease', 'sessionId', id, 'hostId', NULL, 'epoch', epoch)::text)`,
    );
    if (rows.count === 0) throw await this.refusal(op, lease);
  }

  async getLease(sessionId: string): Promise<Lease | undefined> {
    const [row] = await this.sql<Lease[]>`SELECT id AS "sessionId", owner_host AS "hostId", epoch FROM sessions WHERE id = ${sessionId}`;
    return row;
  }

  async listLeases(hostId: string): Promise<Lease[]> {
    return this.sql<Lease[]>`
      SELECT id AS "sessionId", owner_host AS "hostId", epoch FROM sessions WHERE owner_host = ${requireText("leases.list", "hostId", hostId)} ORDER BY id`;
  }

  // Sessions.

  async createSession(session: NewSession, hostId: string): Promise<Lease> {
    const op = "sessions.create";
    const row = {
      ...checkedNewSession(op, session),
      agentRequest: jsonText(op, "agentRequest", session.agentRequest),
      worktree: jsonText(op, "worktree", session.worktree),
      host: requireText(op, "hostId", hostId),
    };
    const rows = await this.guard(
      op,
      () => this.sql`
        INSERT INTO sessions (id, agent, cwd, workspace, title, agent_session_id, agent_request, worktree, created_at, updated_at, owner_host, epoch)
        SELECT ${row.id}, ${row.agent}, ${row.cwd}, ${row.workspace}, ${row.title}, ${row.agentSessionId}, ${row.agentRequest}, ${row.worktree},
          ${row.createdAt}::int8, ${row.createdAt}::int8, ${row.host}, 1
        WHERE ${this.currentIncarnation(row.host)}
        RETURNING pg_notify(${CHANNEL}, json_build_object('type', 'session', 'sessionId', id)::text)`,
    );
    if (rows.count === 0) throw new HostSupersededError(op, row.host, this.incarnations.get(row.host)!);
    return { sessionId: row.id, hostId: row.host, epoch: 1 };
  }

  async getSession(id: string): Promise<Session | undefined> {
    const [row] = await this.sql<SessionRow[]>`SELECT ${this.sql.unsafe(SESSION_COLUMNS)} FROM sessions WHERE id = ${id}`;
    return row && sessionOf(row);
  }

  async listSessions(filter: { cwd?: string } = {}): Promise<Session[]> {
    const where = filter.cwd === undefined ? this.sql`` : this.sql`WHERE cwd = ${filter.cwd}`;
    const rows = await this.sql<SessionRow[]>`
      SELECT ${this.sql.unsafe(SESSION_COLUMNS)} FROM sessions ${where} ORDER BY updated_at DESC, created_at DESC, id`;
    return rows.map(sessionOf);
  }

  async sessionPage(query: SessionPageQuery): Promise<Session[]> {
    const limit = requireCount("sessions.page", "limit", query.limit);
    const { cwd, agent } = query;
    const after = query.after && requireSessionKey("sessions.page", query.after);
    const conditions = [
      ...(cwd === undefined ? [] : [this.sql`cwd = ${cwd}`]),
      ...(agent === undefined ? [] : [this.sql`agent = ${agent}`]),
      // The first term bounds the index range; the rest are the order's tie-breaks.
      ...(after === undefined
        ? []
        : [
            this.sql`updated_at <= ${after.updatedAt} AND (updated_at < ${after.updatedAt} OR created_at < ${after.createdAt}
              OR (created_at = ${after.createdAt} AND id > ${after.id}))`,
          ]),
    ];
    const where = conditions.reduce((sql, condition, i) => this.sql`${sql} ${i === 0 ? this.sql`WHERE` : this.sql`AND`} ${condition}`, this.sql``);
    const rows = await this.sql<SessionRow[]>`
      SELECT ${this.sql.unsafe(SESSION_COLUMNS)} FROM sessions ${where} ORDER BY updated_at DESC, created_at DESC, id LIMIT ${limit}`;
    return rows.map(sessionOf);
  }

  async readSessions(ids: readonly string[]): Promise<SessionRead[]> {
    if (ids.length === 0) return [];
    const wanted = ids.map((id) => requireText("sessions.read", "id", id));
    // Each session's row and lease in one statement (one snapshot); its pending questions beside it.
    const [rows, pending] = await Promise.all([
      this.sql<(SessionRow & { ownerHost: string | null; epoch: number })[]>`
        SELECT ${this.sql.unsafe(SESSION_COLUMNS)}, owner_host AS "ownerHost", epoch FROM sessions WHERE id = ANY(${wanted}::text[])`,
      this.sql<QuestionRow[]>`
        SELECT ${this.sql.unsafe(QUESTION_COLUMNS)} FROM questions WHERE state = 'pending' AND session_id = ANY(${wanted}::text[]) ORDER BY asked_at, id`,
    ]);
    const questionsOf = new Map<string, Question[]>();
    for (const question of pending.map(questionOf)) questionsOf.set(question.sessionId, [...(questionsOf.get(question.sessionId) ?? []), question]);
    return rows.map(({ ownerHost, epoch, ...row }) => ({
      session: sessionOf(row),
      lease: { sessionId: row.id, hostId: ownerHost, epoch },
      pendingQuestions: questionsOf.get(row.id) ?? [],
    }));
  }

  async updateSession(lease: Lease, changes: SessionChanges): Promise<void> {
    const op = "sessions.update";
    const has = (key: keyof SessionChanges) => key in changes && changes[key] !== undefined;
    const agentRequest = jsonText(op, "agentRequest", changes.agentRequest);
    const agentState = jsonText(op, "agentState", changes.agentState);
    const worktree = jsonText(op, "worktree", changes.worktree);
    const title = requireNullableText(op, "title", changes.title);
    const agentSessionId = requireNullableText(op, "agentSessionId", changes.agentSessionId);
    const touchedAt = changes.touchedAt === undefined ? null : requireTimestamp(op, "touchedAt", changes.touchedAt);
    const rows = await this.guard(
      op,
      () => this.sql`
        UPDATE sessions SET
          agent_request = CASE WHEN ${has("agentRequest")} THEN ${agentRequest}::text ELSE agent_request END,
          agent_state = CASE WHEN ${has("agentState")} THEN ${agentState}::text ELSE agent_state END,
          worktree = CASE WHEN ${has("worktree")} THEN ${worktree}::text ELSE worktree END,
          title = CASE WHEN ${has("title")} THEN ${title}::text ELSE title END,
          agent_session_id = CASE WHEN ${has("agentSessionId")} THEN ${agentSessionId}::text ELSE agent_session_id END,
          updated_at = greatest(updated_at, ${touchedAt}::int8)
        WHERE id = ${lease.sessionId} AND epoch = ${lease.epoch}
        RETURNING pg_notify(${CHANNEL}, json_build_object('type', 'session', 'sessionId', id)::text)`,
    );
    if (rows.count === 0) throw await this.refusal(op, lease);
  }

  async deleteSession(lease: Lease): Promise<void> {
    const op = "sessions.delete";
    const rows = await this.guard(
      op,
      () => this.sql`
        DELETE FROM sessions WHERE id = ${lease.sessionId} AND epoch = ${lease.epoch}
        RETURNING pg_notify(${CHANNEL}, json_build_object('type', 'session', 'sessionId', id)::text)`,
    );
    if (rows.count === 0) throw await this.refusal(op, lease);
  }

  // The journal.

  async write(units: readonly WriteUnit[]): Promise<UnitOutcome[]> {
    const encoded = units.map((unit) => encodeOrRefuse(unit));
    const valid = encoded.filter((unit): unit is EncodedUnit => !(unit instanceof Error));
    let runs = runsOf(valid);
    let lasts: Array<number | undefined | Error>;
    try {
      // One transaction (one commit) for the batch, one statement per run of a session's units, pipelined.
      lasts = runs.length === 0 ? [] : await transaction(this.sql, (tx) => appendRuns(tx, runs));
    } catch (error) {
      // The connection failed: the batch may or may not have committed. Each unit fails with it; writing the batch
      // again is safe (events already stored as given are taken as stored, see `appendRun`).
      if (!(error instanceof postgres.PostgresError || error instanceof StoredOtherwiseError)) lasts = runs.map(() => error as Error);
      else {
        // The server refused a statement and rolled the batch back (a seq or question id stored with other content, a
        // session deleted meanwhile): each unit alone, so it costs only itself.
        runs = valid.map((unit) => [unit]);
        lasts = [];
        for (const run of runs)
          lasts.push(await transaction(this.sql, async (tx) => (await appendRuns(tx, [run]))[0]).catch((failure: unknown) => failure as Error));
      }
    }
    const results = new Map<EncodedUnit, UnitOutcome>();
    for (const [index, run] of runs.entries()) await this.settle(run, lasts[index], results);
    return encoded.map((unit) => (unit instanceof Error ? { ok: false, error: unit } : results.get(unit)!));
  }

  async lastSeq(sessionId: string): Promise<number> {
    const [row] = await this.sql<{ lastSeq: number }[]>`SELECT last_seq AS "lastSeq" FROM sessions WHERE id = ${sessionId}`;
    if (!row) throw new StoreNotFoundError("events.lastSeq", "session", sessionId);
    return row.lastSeq;
  }

  async readEvents(sessionId: string, options: ReadOptions = {}): Promise<JournalEvent[]> {
    const op = "events.read";
    const after = requireCount(op, "after", options.after ?? 0);
    const limit = options.limit === undefined ? null : requireCount(op, "limit", options.limit);
    await this.lastSeq(sessionId);
    return (await this.page(sessionId, after, limit)).map(toEvent);
  }

  replay(sessionId: string, options: ReplayOptions = {}): AsyncIterable<JournalEvent> {
    const op = "events.replay";
    const after = requireCount(op, "after", options.after ?? 0);
    const pageSize = requireCount(op, "pageSize", options.pageSize ?? DEFAULT_PAGE_SIZE);
    if (pageSize === 0) throw new StoreInputError(op, "pageSize must be at least 1");
    const backend = this;
    return {
      async *[Symbol.asyncIterator]() {
        await backend.lastSeq(sessionId);
        // Keyset pages: no cursor or transaction stays open between pages, so writers are never held up.
        for (let cursor = after; ; ) {
          const rows = await backend.page(sessionId, cursor, pageSize);
          for (const row of rows) yield toEvent(row);
          const last = rows.at(-1);
          if (last === undefined || rows.length < pageSize) return;
          cursor = last.seq;
        }
      },
    };
  }

  // Questions.

  async getQuestion(id: string): Promise<Question | undefined> {
    const [row] = await this.sql<QuestionRow[]>`SELECT ${this.sql.unsafe(QUESTION_COLUMNS)} FROM questions WHERE id = ${id}`;
    return row && questionOf(row);
  }

  async listPendingQuestions(sessionId?: string): Promise<Question[]> {
    const of = sessionId === undefined ? this.sql`` : this.sql`AND session_id = ${sessionId}`;
    const rows = await this.sql<QuestionRow[]>`
      SELECT ${this.sql.unsafe(QUESTION_COLUMNS)} FROM questions WHERE state = 'pending' ${of} ORDER BY asked_at, id`;
    return rows.map(questionOf);
  }

  async listQuestions(sessionId: string): Promise<Question[]> {
    const rows = await this.sql<QuestionRow[]>`
      SELECT ${this.sql.unsafe(QUESTION_COLUMNS)} FROM questions WHERE session_id = ${sessionId} ORDER BY asked_at, id`;
    return rows.map(questionOf);
  }

  async resolveQuestion(resolution: QuestionResolution, lease?: Lease): Promise<{ won: boolean; seq: number | null }> {
    const op = "questions.resolve";
    const id = requireText(op, "questionId", resolution.questionId);
    const state = requireOneOf(op, "state", resolution.state, ["answered", "cancelled", "orphaned"] as const);
    const at = requireTimestamp(op, "at", resolution.at);
    const answer = resolution.state === "answered" ? encodeJson(op, "answer", resolution.answer) : null;
    const reason = resolution.state === "answered" ? null : requireText(op, "reason", resolution.reason);
    const detail = resolution.state === "answered" ? { answer: resolution.answer } : { reason };
    const payload = encodeJson(op, "payload", { questionId: id, state, ...detail });
    // The seq the host's journal gave the event (stored as given; a seq taken fails the statement), or none: drawn here.
    const given = resolution.seq === undefined ? null : requireCount(op, "seq", resolution.seq);
    // The `state = 'pending'` guard makes the first resolution win fleet-wide; its event is drawn under the session's lock.
    // The lease's epoch is compared under that lock too, taken first (as a journal write does): a takeover committing
    // while this waits for the row is seen, never a snapshot from before it.
    const [row] = await this.guard(op, () =>
      transaction(this.sql, async (tx) => {
        if (lease) await tx`SELECT 1 FROM sessions WHERE id = (SELECT session_id FROM questions WHERE id = ${id}) FOR UPDATE`;
        return tx<{ seq: number }[]>`
        WITH resolved AS (
          UPDATE questions q SET state = ${state}, answer = ${answer}::text, reason = ${reason}::text, resolved_at = ${at}
          WHERE q.id = ${id} AND q.state = 'pending' AND (${lease?.epoch ?? null}::int8 IS NULL OR EXISTS (
            SELECT 1 FROM sessions s WHERE s.id = q.session_id AND s.id = ${lease?.sessionId ?? null}::text AND s.epoch = ${lease?.epoch ?? null}::int8))
          RETURNING q.session_id
        ), claimed AS (
          UPDATE sessions s SET last_seq = CASE WHEN ${given}::int8 IS NULL THEN s.last_seq + 1 ELSE greatest(s.last_seq, ${given}::int8) END
          FROM resolved WHERE s.id = resolved.session_id RETURNING s.id, s.last_seq, coalesce(${given}::int8, s.last_seq) AS seq
        ), appended AS (
          INSERT INTO events (session_id, seq, kind, payload, at) SELECT id, seq, 'question_resolved', ${payload}, ${at} FROM claimed
        )
        SELECT seq,
          pg_notify(${CHANNEL}, json_build_object('type', 'question', 'sessionId', id, 'questionId', ${id}::text)::text),
          pg_notify(${CHANNEL}, json_build_object('type', 'events', 'sessionId', id, 'lastSeq', last_seq)::text)
        FROM claimed`;
      }),
    );
    if (row) return { won: true, seq: row.seq };
    const question = await this.getQuestion(id);
    if (!question) throw new StoreNotFoundError(op, "question", id);
    if (lease && question.state === "pending") {
      if (lease.sessionId !== question.sessionId) {
        throw new StoreInputError(op, `question ${JSON.stringify(id)} belongs to session ${JSON.stringify(question.sessionId)}, not to the lease's`);
      }
      throw await this.refusal(op, lease);
    }
    return { won: false, seq: null };
  }

  async orphanPendingQuestions(hostId: string, reason: string, at: number): Promise<Question[]> {
    const op = "questions.orphanPending";
    const host = requireText(op, "hostId", hostId);
    const why = requireText(op, "reason", reason);
    const resolvedAt = requireTimestamp(op, "at", at);
    // One transaction: the host's sessions locked first (a takeover waits, a writer of them too), then each question
    // orphaned with its `question_resolved` event, numbered after its session's last seq in the order they were asked.
    // Never by a superseded incarnation: it writes events and moves the last seq of sessions that are not its own.
    const rows = await this.guard(op, () =>
      transaction(this.sql, async (tx) => {
        await tx`SELECT id FROM sessions WHERE owner_host = ${host} ORDER BY id FOR UPDATE`;
        const [check] = await tx<{ current: boolean }[]>`SELECT ${this.currentIncarnation(host)} AS current`;
        if (!check!.current) throw this.superseded(op, host);
        return tx<QuestionRow[]>`
          WITH orphaned AS (
            UPDATE questions q SET state = 'orphaned', reason = ${why}, resolved_at = ${resolvedAt}
            FROM sessions s WHERE s.id = q.session_id AND s.owner_host = ${host} AND q.state = 'pending'
            RETURNING q.*
          ), numbered AS (
            SELECT o.*, row_number() OVER (PARTITION BY o.session_id ORDER BY o.asked_at, o.id) AS ord,
              count(*) OVER (PARTITION BY o.session_id) AS n
            FROM orphaned o
          ), claimed AS (
            UPDATE sessions s SET last_seq = s.last_seq + c.n
            FROM (SELECT session_id, count(*) AS n FROM orphaned GROUP BY session_id) c WHERE s.id = c.session_id
            RETURNING s.id, s.last_seq
          ), appended AS (
            INSERT INTO events (session_id, seq, kind, payload, at)
            SELECT n.session_id, c.last_seq - n.n + n.ord, 'question_resolved',
              json_build_object('questionId', n.id, 'state', 'orphaned', 'reason', ${why}::text)::text, ${resolvedAt}
            FROM numbered n JOIN claimed c ON c.id = n.session_id
          )
          SELECT n.id, n.session_id AS "sessionId", n.kind, n.request, n.asked_at AS "askedAt", n.state, n.answer, n.reason,
            n.resolved_at AS "resolvedAt", pg_notify(${CHANNEL}, json_build_object('type', 'question', 'sessionId', n.session_id, 'questionId', n.id)::text),
            pg_notify(${CHANNEL}, json_build_object('type', 'events', 'sessionId', n.session_id, 'lastSeq', c.last_seq)::text)
          FROM numbered n JOIN claimed c ON c.id = n.session_id`;
      }),
    );
    // Only the question's own columns (not the notifications').
    return rows
      .map(({ id, sessionId, kind, request, askedAt, state, answer, reason, resolvedAt }) =>
        questionOf({ id, sessionId, kind, request, askedAt, state, answer, reason, resolvedAt }),
      )
      .sort((a, b) => a.askedAt - b.askedAt || (a.id < b.id ? -1 : 1));
  }

  // Review comments.

  async addReviewComment(comment: NewReviewComment): Promise<void> {
    const op = "reviewComments.add";
    const { id, sessionId, path, line, side, body, createdAt } = checkedComment(op, comment);
    // Selecting from sessions turns an unknown session into "no row inserted" instead of a bare FK failure.
    const rows = await this.guard(
      op,
      () => this.sql`
        INSERT INTO review_comments (id, session_id, path, line, side, body, created_at)
        SELECT ${id}, id, ${path}, ${line}, ${side}, ${body}, ${createdAt} FROM sessions WHERE id = ${sessionId}
        RETURNING id`,
    );
    if (rows.length === 0) throw new StoreNotFoundError(op, "session", sessionId);
  }

  async listReviewComments(sessionId: string): Promise<ReviewComment[]> {
    const rows = await this.sql<ReviewComment[]>`
      SELECT ${this.sql.unsafe(COMMENT_COLUMNS)} FROM review_comments WHERE session_id = ${sessionId} ORDER BY created_at, id`;
    return rows.map((row) => ({ ...row }));
  }

  async editReviewComment(id: string, body: string): Promise<boolean> {
    const op = "reviewComments.edit";
    const text = requireText(op, "body", body);
    const rows = await this.guard(
      op,
      () => this.sql`UPDATE review_comments SET body = ${text} WHERE id = ${requireText(op, "id", id)} AND sent_at IS NULL RETURNING id`,
    );
    return rows.length === 1;
  }

  async deleteReviewComment(id: string): Promise<boolean> {
    const op = "reviewComments.delete";
    const rows = await this.guard(op, () => this.sql`DELETE FROM review_comments WHERE id = ${requireText(op, "id", id)} RETURNING id`);
    return rows.length === 1;
  }

  async markReviewCommentsSent(ids: readonly string[], at: number): Promise<number> {
    const op = "reviewComments.markSent";
    const sentAt = requireTimestamp(op, "at", at);
    const wanted = ids.map((id) => requireText(op, "id", id));
    const rows = await this.guard(
      op,
      () => this.sql`UPDATE review_comments SET sent_at = ${sentAt} WHERE id = ANY(${wanted}::text[]) AND sent_at IS NULL RETURNING id`,
    );
    return rows.length;
  }

  // Lifecycle records.

  async appendRecord(hostId: string, kind: string, payload: unknown, at: number): Promise<number> {
    const op = "lifecycleRecords.append";
    const host = requireText(op, "hostId", hostId);
    const values = [requireTimestamp(op, "at", at), requireText(op, "kind", kind), encodeJson(op, "payload", payload)] as const;
    const [row] = await this.guard(
      op,
      () => this.sql<{ id: number }[]>`
        INSERT INTO lifecycle_records (at, kind, payload) SELECT ${values[0]}, ${values[1]}, ${values[2]}
        WHERE ${this.currentIncarnation(host)}
        RETURNING id, pg_notify(${CHANNEL}, json_build_object('type', 'record', 'id', id, 'hostId', ${host}::text)::text)`,
    );
    if (!row) throw this.superseded(op, host);
    return row.id;
  }

  async recentRecords(limit: number): Promise<LifecycleRecord[]> {
    const count = requireCount("lifecycleRecords.recent", "limit", limit);
    const rows = await this.sql<RecordRow[]>`
      SELECT * FROM (SELECT id, at, kind, payload FROM lifecycle_records ORDER BY id DESC LIMIT ${count}) newest ORDER BY id`;
    return rows.map(recordOf);
  }

  async recordsAfter(id: number, limit?: number): Promise<LifecycleRecord[]> {
    const op = "lifecycleRecords.after";
    const max = limit === undefined ? null : requireCount(op, "limit", limit);
    const rows = await this.sql<RecordRow[]>`
      SELECT id, at, kind, payload FROM lifecycle_records WHERE id > ${requireCount(op, "id", id)} ORDER BY id LIMIT ${max}`;
    return rows.map(recordOf);
  }

  async pruneRecordsBefore(hostId: string, at: number): Promise<number> {
    const op = "lifecycleRecords.pruneBefore";
    const host = requireText(op, "hostId", hostId);
    const cutoff = requireTimestamp(op, "before", at);
    // One statement: the incarnation checked and the records deleted from one snapshot.
    const [row] = await this.guard(
      op,
      () => this.sql<{ current: boolean; count: number }[]>`
        WITH pruned AS (DELETE FROM lifecycle_records WHERE at < ${cutoff} AND ${this.currentIncarnation(host)} RETURNING 1)
        SELECT ${this.currentIncarnation(host)} AS current, (SELECT count(*) FROM pruned)::int8 AS count`,
    );
    if (!row!.current) throw this.superseded(op, host);
    return row!.count;
  }

  // The process-group ledger.

  async addGroup(hostId: string, group: LedgerEntry): Promise<void> {
    const op = "processGroups.add";
    const host = requireText(op, "hostId", hostId);
    const row = {
      pgid: requirePgid(op, group.pgid),
      kind: requireOneOf(op, "kind", group.kind, processKinds),
      label: requireText(op, "label", group.label),
      startTicks: requireCount(op, "startTicks", group.startTicks),
      bootId: requireText(op, "bootId", group.bootId),
      startedAt: requireTimestamp(op, "startedAt", group.startedAt),
    };
    // A pgid belongs to one live group of a host: recording it again replaces the stale record.
    const rows = await this.guard(
      op,
      () => this.sql`
        INSERT INTO process_groups (host_id, pgid, kind, label, start_ticks, boot_id, started_at)
        SELECT ${host}, ${row.pgid}, ${row.kind}, ${row.label}, ${row.startTicks}, ${row.bootId}, ${row.startedAt}
        WHERE ${this.currentIncarnation(host)}
        ON CONFLICT (host_id, pgid) DO UPDATE SET kind = excluded.kind, label = excluded.label, start_ticks = excluded.start_ticks,
          boot_id = excluded.boot_id, started_at = excluded.started_at`,
    );
    if (rows.count === 0) throw this.superseded(op, host);
  }

  async deleteGroup(hostId: string, pgid: number): Promise<void> {
    const op = "processGroups.delete";
    const host = requireText(op, "hostId", hostId);
    const id = requirePgid(op, pgid);
    const [row] = await this.guard(
      op,
      () => this.sql<{ current: boolean }[]>`
        WITH deleted AS (DELETE FROM process_groups WHERE host_id = ${host} AND pgid = ${id} AND ${this.currentIncarnation(host)} RETURNING 1)
        SELECT ${this.currentIncarnation(host)} AS current`,
    );
    if (!row!.current) throw this.superseded(op, host);
  }

  async listGroups(hostId: string): Promise<LedgerEntry[]> {
    return this.sql<LedgerEntry[]>`
      SELECT pgid, kind, label, start_ticks AS "startTicks", boot_id AS "bootId", started_at AS "startedAt"
      FROM process_groups WHERE host_id = ${hostId} ORDER BY started_at, pgid`;
  }

  // Agents' initialize answers.

  async putAgentProfile(hostId: string, profile: AgentProfile): Promise<void> {
    const op = "agentProfiles.put";
    const host = requireText(op, "hostId", hostId);
    const agent = requireText(op, "agent", profile.agent);
    const command = requireText(op, "command", profile.command);
    const at = requireTimestamp(op, "at", profile.at);
    const initialize = encodeJson(op, "initialize", profile.initialize);
    const rows = await this.guard(
      op,
      () => this.sql`
        INSERT INTO agent_profiles (agent, command, initialize, at) SELECT ${agent}, ${command}, ${initialize}, ${at}
        WHERE ${this.currentIncarnation(host)}
        ON CONFLICT (agent) DO UPDATE SET command = excluded.command, initialize = excluded.initialize, at = excluded.at`,
    );
    if (rows.count === 0) throw this.superseded(op, host);
  }

  async getAgentProfile(agent: string): Promise<AgentProfile | undefined> {
    const [row] = await this.sql<{ agent: string; command: string; initialize: string; at: number }[]>`
      SELECT agent, command, initialize, at FROM agent_profiles WHERE agent = ${agent}`;
    return row && { ...row, initialize: decodeJson(row.initialize) };
  }

  async subscribe(listener: (change: StoreChange) => void): Promise<() => Promise<void>> {
    // The client keeps one connection for LISTEN and listens again after it reconnects: what was notified while it was
    // away is lost, which the listener hears as `missed`.
    let listens = 0;
    const { unlisten } = await this.sql.listen(
      CHANNEL,
      (payload) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(payload);
        } catch {
          return; // Not ours: something else notified on the channel.
        }
        // A journal transaction notifies once, with the changes of all its sessions.
        for (const change of (Array.isArray(parsed) ? parsed : [parsed]) as StoreChange[]) listener(change);
      },
      () => {
        if (listens++ > 0) listener({ type: "missed" });
      },
    );
    return unlisten;
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }

  private superseded(op: string, hostId: string): HostSupersededError {
    return new HostSupersededError(op, hostId, this.incarnations.get(hostId)!);
  }

  /** True unless this object registered `hostId` and a later incarnation of it registered since (SQL, for a WHERE clause). */
  private currentIncarnation(hostId: string) {
    const mine = this.incarnations.get(hostId) ?? null;
    return this.sql`(${mine}::int8 IS NULL OR EXISTS (SELECT 1 FROM hosts WHERE hosts.id = ${hostId} AND hosts.incarnation = ${mine}::int8))`;
  }

  private page(sessionId: string, after: number, limit: number | null): Promise<EventRow[]> {
    return this.sql<EventRow[]>`
      SELECT session_id AS "sessionId", seq, kind, payload, at FROM events
      WHERE session_id = ${sessionId} AND seq > ${after} ORDER BY seq LIMIT ${limit}`;
  }

  /** Each unit of a run gets its seqs (given, or drawn in order ending at `last`), or the run's failure. */
  private async settle(run: readonly EncodedUnit[], last: number | undefined | Error, results: Map<EncodedUnit, UnitOutcome>): Promise<void> {
    const failure =
      last instanceof Error ? writeError("events.write", last) : last === undefined ? await this.refusal("events.write", run[0]!.lease) : null;
    let seq = typeof last === "number" ? last - run.reduce((sum, unit) => sum + unit.kinds.length, 0) : 0;
    for (const unit of run) {
      results.set(unit, failure ? { ok: false, error: failure } : { ok: true, seqs: unit.seqs ?? unit.kinds.map(() => ++seq) });
    }
  }

  /** Why a fenced write matched no row: the session is gone, or the epoch is stale. */
  private async refusal(op: string, lease: Lease): Promise<Error> {
    let current: Lease | undefined;
    try {
      current = await this.getLease(lease.sessionId);
    } catch (error) {
      return writeError(op, error);
    }
    if (!current) return new StoreNotFoundError(op, "session", lease.sessionId);
    return new StaleEpochError(op, lease.sessionId, lease.epoch, { hostId: current.hostId, epoch: current.epoch });
  }

  private async guard<T>(op: string, query: () => Promise<T>): Promise<T> {
    try {
      return await query();
    } catch (error) {
      throw writeError(op, error);
    }
  }
}

/** The unit checked and encoded, or why it is refused (before it reaches the server). */
function encodeOrRefuse(unit: WriteUnit): EncodedUnit | Error {
  try {
    return encodeWriteUnit(unit);
  } catch (error) {
    return error as Error;
  }
}

/** Consecutive units under one lease, all with given seqs or all without: stored by one statement (an agent's stream is many units of one session). */
function runsOf(units: readonly EncodedUnit[]): EncodedUnit[][] {
  const runs: EncodedUnit[][] = [];
  for (const unit of units) {
    const run = runs.at(-1);
    const lease = run?.[0]?.lease;
    const sameMode = (run?.[0]?.seqs === null) === (unit.seqs === null);
    if (run && lease?.sessionId === unit.lease.sessionId && lease.epoch === unit.lease.epoch && sameMode) run.push(unit);
    else runs.push([unit]);
  }
  return runs;
}

/**
 * The runs of one transaction, pipelined, then one statement notifying all of them (not a `NOTIFY` per run's statement,
 * which serialises committing writers on the notification queue's lock for longer): the sessions written, each with its
 * last seq, in one notification, or in as many as a large batch's list needs.
 */
async function appendRuns(tx: Transaction, runs: readonly (readonly EncodedUnit[])[]): Promise<Array<number | undefined>> {
  const lasts = await Promise.all(runs.map((run) => appendRun(tx, run)));
  const changes: StoreChange[] = runs.flatMap((run, index) => {
    const lastSeq = lasts[index];
    return lastSeq === undefined ? [] : [{ type: "events", sessionId: run[0]!.lease.sessionId, lastSeq }];
  });
  if (changes.length === 0) return lasts;
  await tx`SELECT pg_notify(${CHANNEL}, payload) FROM unnest(${notificationPayloads(changes)}::text[]) AS payload`;
  return lasts;
}

/**
 * Changes as notification payloads, each within PostgreSQL's limit: one for most batches, more for a batch of many
 * sessions (a `missed` would make every other host read everything).
 */
function notificationPayloads(changes: readonly StoreChange[]): string[] {
  const payloads: string[] = [];
  let listed: string[] = [];
  let bytes = 2;
  const flush = () => {
    if (listed.length > 0) payloads.push(listed.length === 1 ? listed[0]! : `[${listed.join(",")}]`);
    listed = [];
    bytes = 2;
  };
  for (const change of changes) {
    const text = JSON.stringify(change);
    const size = Buffer.byteLength(text) + 1;
    if (bytes + size > MAX_PAYLOAD_BYTES) flush();
    listed.push(text);
    bytes += size;
  }
  flush();
  return payloads;
}

/**
 * A run of units, one statement: the session's row is updated only at the lease's epoch (else no
 * row, nothing stored), which locks it against other writers of the session and draws the seqs
 * (or takes the given ones); the events and questions are inserted from that row. Resolves to the
 * last seq drawn, or undefined if the epoch did not match (or the session is gone).
 *
 * Idempotent for given seqs: an event whose seq is already stored with the same kind, payload and
 * time, or a question already stored as asked with such events, is taken as stored (a write whose commit reached the
 * server but whose reply was lost, written again); one stored with other content fails the run with
 * {@link StoredOtherwiseError}, so `run` must be inside a transaction (which the error rolls back).
 */
async function appendRun(tx: Transaction, run: readonly EncodedUnit[]): Promise<number | undefined> {
  const { sessionId, epoch } = run[0]!.lease;
  const kinds = run.flatMap((unit) => unit.kinds);
  const questions = run.flatMap((unit) => (unit.question ? [unit.question] : []));
  const touched = run.flatMap((unit) => (unit.touchedAt === null ? [] : [unit.touchedAt]));
  const title = run.find((unit) => unit.titleIfNone !== null)?.titleIfNone ?? null;
  const n = kinds.length;
  // Given seqs (the journal's, already published): stored as they are, the last seq moved up to them.
  const given = run[0]!.seqs === null ? null : run.flatMap((unit) => unit.seqs!);
  const lastGiven = given === null || given.length === 0 ? null : Math.max(...given);
  // What was neither inserted now nor found stored alike: a conflict. A row another transaction committed after this
  // statement's snapshot is not seen here either, so it counts as one too (loud, never taken as stored unseen).
  const [row] = await tx<{ lastSeq: number; conflicts: number }[]>`
    WITH claimed AS (
      UPDATE sessions SET last_seq = CASE WHEN ${given !== null} THEN greatest(last_seq, ${lastGiven}::int8) ELSE last_seq + ${n} END,
        updated_at = greatest(updated_at, ${touched.length > 0 ? Math.max(...touched) : null}::int8),
        title = coalesce(title, ${title}::text)
      WHERE id = ${sessionId} AND epoch = ${epoch}
      RETURNING id, last_seq
    ), incoming AS (
      SELECT claimed.id AS session_id, coalesce(e.seq, claimed.last_seq - ${n} + e.ord) AS seq, e.kind, e.payload, e.at
      FROM claimed, unnest(${kinds}::text[], ${run.flatMap((unit) => unit.payloads)}::text[], ${run.flatMap((unit) => unit.ats)}::int8[],
        ${given ?? kinds.map(() => null)}::int8[]) WITH ORDINALITY AS e (kind, payload, at, seq, ord)
    ), appended AS (
      INSERT INTO events (session_id, seq, kind, payload, at) SELECT session_id, seq, kind, payload, at FROM incoming
      ON CONFLICT (session_id, seq) DO NOTHING RETURNING seq
    ), asking AS (
      SELECT q.id, claimed.id AS session_id, q.kind, q.request, q.asked_at
      FROM claimed, unnest(${questions.map((q) => q.id)}::text[], ${questions.map((q) => q.kind)}::text[],
        ${questions.map((q) => q.request)}::text[], ${questions.map((q) => q.askedAt)}::int8[]) AS q (id, kind, request, asked_at)
    ), asked AS (
      INSERT INTO questions (id, session_id, kind, request, asked_at) SELECT id, session_id, kind, request, asked_at FROM asking
      ON CONFLICT (id) DO NOTHING RETURNING id
    )
    SELECT last_seq AS "lastSeq",
      (SELECT count(*) FROM incoming g WHERE g.seq NOT IN (SELECT seq FROM appended) AND NOT EXISTS (
        SELECT 1 FROM events ev WHERE ev.session_id = g.session_id AND ev.seq = g.seq AND ev.kind = g.kind AND ev.payload = g.payload AND ev.at = g.at))
      + (SELECT count(*) FROM asking a WHERE a.id NOT IN (SELECT id FROM asked) AND NOT (${given !== null} AND EXISTS (
        SELECT 1 FROM questions q WHERE q.id = a.id AND q.session_id = a.session_id AND q.kind = a.kind AND q.request = a.request
          AND q.asked_at = a.asked_at))) AS conflicts
    FROM claimed`;
  if (row && row.conflicts > 0) {
    throw new StoredOtherwiseError(
      `${row.conflicts} event(s) or question(s) of session ${JSON.stringify(sessionId)} are already stored with other content (seqs ${given?.join(", ") ?? "drawn"})`,
    );
  }
  return row?.lastSeq;
}

/** A seq (or question id) given to a write is stored already, with other content: a real conflict, never a retry's double. */
class StoredOtherwiseError extends StoreWriteError {
  constructor(detail: string) {
    super("events.write", "23505", detail);
  }
}

interface RecordRow {
  id: number;
  at: number;
  kind: string;
  payload: string;
}

function sessionOf(row: SessionRow): Session {
  return {
    ...row,
    agentRequest: row.agentRequest === null ? null : decodeJson(row.agentRequest),
    agentState: row.agentState === null ? null : decodeJson(row.agentState),
    worktree: row.worktree === null ? null : decodeJson(row.worktree),
  };
}

function questionOf(row: QuestionRow): Question {
  return { ...row, request: decodeJson(row.request), answer: row.answer === null ? null : decodeJson(row.answer) };
}

function recordOf(row: RecordRow): LifecycleRecord {
  return { ...row, payload: decodeJson(row.payload) };
}

function jsonText(op: string, field: string, value: unknown): string | null {
  return value === null || value === undefined ? null : encodeJson(op, field, value);
}

function requirePgid(op: string, pgid: unknown): number {
  const value = requireCount(op, "pgid", pgid);
  if (value < 2) throw new StoreInputError(op, `pgid must be greater than 1, got ${value}`);
  return value;
}

/** A refusal by the server (constraint, connection lost...) as the store's write error, with PostgreSQL's SQLSTATE as the code. */
function writeError(op: string, error: unknown): Error {
  if (
    error instanceof StoreInputError ||
    error instanceof StoreWriteError ||
    error instanceof StoreNotFoundError ||
    error instanceof StaleEpochError ||
    error instanceof HostSupersededError
  ) {
    return error;
  }
  const code = (error as { code?: unknown }).code;
  return new StoreWriteError(op, typeof code === "string" ? code : "UNKNOWN", (error as Error).message, { cause: error });
}
