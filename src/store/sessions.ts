import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./database.js";
import { StoreNotFoundError } from "./errors.js";
import { requireAbsolutePath, requireCount, requireNullableText, requireSessionKey, requireText, requireTimestamp, type Json } from "./input.js";
import { guardWrite } from "./write-guard.js";

export interface Session {
  /** Berth's own id. */
  id: string;
  /** The agent id from the configuration. */
  agent: string;
  /** Canonical absolute directory. */
  cwd: string;
  workspace: string | null;
  title: string | null;
  /** The agent's own session id, once the agent has given one. */
  agentSessionId: string | null;
  /** What the client asked of the agent in `session/new` that every child of the session is given again. */
  agentRequest: Json | null;
  /** The session's state as the agent last reported it (modes, models, config options, commands). */
  agentState: Json | null;
  /** The git worktree the session works in (src/worktrees/), as JSON; null for a plain directory. */
  worktree: Json | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewSession {
  id: string;
  agent: string;
  cwd: string;
  workspace?: string | null;
  title?: string | null;
  agentSessionId?: string | null;
  agentRequest?: object | null;
  worktree?: object | null;
  createdAt: number;
}

/**
 * A change the host's one writer has queued and not committed yet. The main thread's reads show
 * it at once, so nothing reads an older state of a session than the one the host itself set.
 */
export interface QueuedSessionChange {
  /** Set only if the session has none (as the writer does). */
  readonly title?: string;
  /** A person's rename: replaces the title, null clears it. */
  readonly renamedTo?: string | null;
  readonly agentSessionId?: string | null;
  readonly agentRequest?: Json | null;
  readonly agentState?: Json | null;
  readonly worktree?: Json | null;
  /** Never backwards. */
  readonly updatedAt?: number;
}

interface PageParams {
  cwd: string | null;
  agent: string | null;
  updatedAt: number | null;
  createdAt: number | null;
  id: string | null;
  limit: number;
}

interface SessionRow extends Omit<Session, "agentRequest" | "agentState" | "worktree"> {
  agentRequest: string | null;
  agentState: string | null;
  worktree: string | null;
}

const COLUMNS = `id, agent, cwd, workspace, title, agent_session_id AS agentSessionId,
  agent_request AS agentRequest, agent_state AS agentState, worktree, created_at AS createdAt, updated_at AS updatedAt`;
const NEWEST_FIRST = "ORDER BY updated_at DESC, created_at DESC, id";

/** Where a session is in the newest-first order of session lists: what a page's cursor names. */
export interface SessionKey {
  readonly updatedAt: number;
  readonly createdAt: number;
  readonly id: string;
}

/** A page of a session list: those after `after` (none: from the newest), of `cwd` and `agent` if given. */
export interface SessionPageQuery {
  readonly cwd?: string;
  readonly agent?: string;
  readonly after?: SessionKey;
  readonly limit: number;
}

export class SessionStore {
  readonly #insert;
  readonly #get;
  readonly #exists;
  readonly #listAll;
  readonly #listByCwd;
  readonly #setTitle;
  readonly #setAgentSessionId;
  readonly #setAgentState;
  readonly #setAgentRequest;
  readonly #setWorktree;
  readonly #touch;
  readonly #delete;
  readonly #queued = new Map<string, { change: QueuedSessionChange; writes: number }>();
  /** The page queries, one per combination of filters, prepared when first asked. */
  readonly #pages = new Map<string, Statement<PageParams, SessionRow>>();
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#insert = db.prepare<Session>(
      `INSERT INTO sessions (id, agent, cwd, workspace, title, agent_session_id, agent_request, worktree, created_at, updated_at)
       VALUES (@id, @agent, @cwd, @workspace, @title, @agentSessionId, @agentRequest, @worktree, @createdAt, @updatedAt)`,
    );
    this.#get = db.prepare<[string], SessionRow>(`SELECT ${COLUMNS} FROM sessions WHERE id = ?`);
    this.#exists = db.prepare<[string], 1>("SELECT 1 FROM sessions WHERE id = ?").pluck();
    this.#listAll = db.prepare<[], SessionRow>(`SELECT ${COLUMNS} FROM sessions ${NEWEST_FIRST}`);
    this.#listByCwd = db.prepare<[string], SessionRow>(`SELECT ${COLUMNS} FROM sessions WHERE cwd = ? ${NEWEST_FIRST}`);
    this.#setTitle = db.prepare<[string | null, string]>("UPDATE sessions SET title = ? WHERE id = ?");
    this.#setAgentSessionId = db.prepare<[string | null, string]>("UPDATE sessions SET agent_session_id = ? WHERE id = ?");
    // Never backwards: a late, out-of-order touch must not make a session look older than it is.
    this.#setAgentRequest = db.prepare<[string | null, string]>("UPDATE sessions SET agent_request = ? WHERE id = ?");
    this.#setAgentState = db.prepare<[string | null, string]>("UPDATE sessions SET agent_state = ? WHERE id = ?");
    this.#setWorktree = db.prepare<[string | null, string]>("UPDATE sessions SET worktree = ? WHERE id = ?");
    this.#touch = db.prepare<[number, string]>("UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?");
    this.#delete = db.prepare<[string]>("DELETE FROM sessions WHERE id = ?");
  }

  create(session: NewSession): Session {
    const op = "sessions.create";
    const row: Session = {
      ...checkedNewSession(op, session),
      agentRequest: (session.agentRequest ?? null) as Json | null,
      agentState: null,
      worktree: (session.worktree ?? null) as Json | null,
      updatedAt: session.createdAt,
    };
    guardWrite(op, () => this.#insert.run({ ...row, agentRequest: jsonText(row.agentRequest), agentState: null, worktree: jsonText(row.worktree) }));
    return row;
  }

  /** The session as stored, with the changes still queued for it (see {@link queued}). */
  get(id: string): Session | undefined {
    const row = this.#get.get(id);
    return row && this.#withQueued(sessionOf(row));
  }

  /** Whether the session is stored: what {@link get} would find, without reading its row. */
  has(id: string): boolean {
    return this.#exists.get(id) !== undefined;
  }

  /** Newest (most recently updated) first; only those in `cwd` if given. With the changes still queued. */
  list(filter: { cwd?: string } = {}): Session[] {
    const sessions = (filter.cwd === undefined ? this.#listAll.all() : this.#listByCwd.all(filter.cwd)).map(sessionOf);
    if (this.#queued.size === 0) return sessions;
    return sessions.map((session) => this.#withQueued(session)).sort(newestFirst);
  }

  /**
   * Up to `limit` sessions after `after` in the order of {@link list}, with the changes still queued, read by keyset
   * from the recency indexes: as fast on the last page of thousands as on the first. A session whose queued change
   * moves it ahead of `after` is on an earlier page now, not this one.
   */
  page(query: SessionPageQuery): Session[] {
    const op = "sessions.page";
    const limit = requireCount(op, "limit", query.limit);
    const { cwd, agent } = query;
    const after = query.after && requireSessionKey(op, query.after);
    // Each queued session's stored place may be behind its shown one: read that many more, then place them as shown.
    const rows = this.#pageQuery(cwd !== undefined, agent !== undefined, after !== undefined).all({
      cwd: cwd ?? null,
      agent: agent ?? null,
      updatedAt: after?.updatedAt ?? null,
      createdAt: after?.createdAt ?? null,
      id: after?.id ?? null,
      limit: limit + this.#queued.size,
    });
    const sessions = rows.map(sessionOf);
    if (this.#queued.size === 0) return sessions.slice(0, limit);
    const byId = new Map(sessions.map((session) => [session.id, this.#withQueued(session)]));
    for (const id of this.#queued.keys()) {
      const session = byId.has(id) ? undefined : this.get(id);
      if (session && (cwd === undefined || session.cwd === cwd) && (agent === undefined || session.agent === agent)) byId.set(id, session);
    }
    return [...byId.values()]
      .filter((session) => after === undefined || newestFirst(after, session) < 0)
      .sort(newestFirst)
      .slice(0, limit);
  }

  #pageQuery(byCwd: boolean, byAgent: boolean, afterKey: boolean): Statement<PageParams, SessionRow> {
    const name = `${byCwd}/${byAgent}/${afterKey}`;
    const known = this.#pages.get(name);
    if (known) return known;
    const conditions = [
      ...(byCwd ? ["cwd = @cwd"] : []),
      ...(byAgent ? ["agent = @agent"] : []),
      // The first term bounds the index range; the rest are the order's tie-breaks.
      ...(afterKey
        ? ["updated_at <= @updatedAt AND (updated_at < @updatedAt OR created_at < @createdAt OR (created_at = @createdAt AND id > @id))"]
        : []),
    ];
    const where = conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`;
    const statement = this.#db.prepare<PageParams, SessionRow>(`SELECT ${COLUMNS} FROM sessions ${where} ${NEWEST_FIRST} LIMIT @limit`);
    this.#pages.set(name, statement);
    return statement;
  }

  /** The host's writer queued `change` for session `id`: reads show it until {@link landed} was called once for each `queued`. */
  queued(id: string, change: QueuedSessionChange): void {
    const entry = this.#queued.get(id) ?? { change: {}, writes: 0 };
    const updatedAt = Math.max(change.updatedAt ?? 0, entry.change.updatedAt ?? 0);
    entry.change = { ...entry.change, ...change, ...(updatedAt > 0 ? { updatedAt } : {}) };
    entry.writes++;
    this.#queued.set(id, entry);
  }

  /** One queued change was committed (or refused): once all have, reads show the stored row alone. */
  landed(id: string): void {
    const entry = this.#queued.get(id);
    if (entry && --entry.writes === 0) this.#queued.delete(id);
  }

  setAgentRequest(id: string, request: object | null): void {
    this.#update("sessions.setAgentRequest", id, () => this.#setAgentRequest.run(jsonText(request), id).changes);
  }

  setAgentState(id: string, state: object | null): void {
    this.#update("sessions.setAgentState", id, () => this.#setAgentState.run(jsonText(state), id).changes);
  }

  setWorktree(id: string, worktree: object | null): void {
    this.#update("sessions.setWorktree", id, () => this.#setWorktree.run(jsonText(worktree), id).changes);
  }

  setTitle(id: string, title: string | null): void {
    const op = "sessions.setTitle";
    const value = requireNullableText(op, "title", title);
    this.#update(op, id, () => this.#setTitle.run(value, id).changes);
  }

  setAgentSessionId(id: string, agentSessionId: string | null): void {
    const op = "sessions.setAgentSessionId";
    const value = requireNullableText(op, "agentSessionId", agentSessionId);
    this.#update(op, id, () => this.#setAgentSessionId.run(value, id).changes);
  }

  touch(id: string, updatedAt: number): void {
    const op = "sessions.touch";
    const at = requireTimestamp(op, "updatedAt", updatedAt);
    this.#update(op, id, () => this.#touch.run(at, id).changes);
  }

  /** Deletes the session with its journal and questions; returns whether it existed. */
  delete(id: string): boolean {
    return guardWrite("sessions.delete", () => this.#delete.run(id).changes) === 1;
  }

  #withQueued(session: Session): Session {
    const change = this.#queued.get(session.id)?.change;
    if (!change) return session;
    const { title, renamedTo, updatedAt, ...fields } = change;
    const shownTitle = renamedTo !== undefined ? renamedTo : (session.title ?? title ?? null);
    return { ...session, ...fields, title: shownTitle, updatedAt: Math.max(session.updatedAt, updatedAt ?? 0) };
  }

  #update(op: string, id: string, update: () => number): void {
    if (guardWrite(op, update) === 0) throw new StoreNotFoundError(op, "session", id);
  }
}

/** The order of `NEWEST_FIRST`: negative if `a` comes first. */
export function newestFirst(a: SessionKey, b: SessionKey): number {
  return b.updatedAt - a.updatedAt || b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function jsonText(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

function sessionOf(row: SessionRow): Session {
  return {
    ...row,
    agentRequest: row.agentRequest === null ? null : (JSON.parse(row.agentRequest) as Json),
    agentState: row.agentState === null ? null : (JSON.parse(row.agentState) as Json),
    worktree: row.worktree === null ? null : (JSON.parse(row.worktree) as Json),
  };
}

/** A new session's plain fields, each checked, for either store: a bad one throws naming it. */
export function checkedNewSession(op: string, session: NewSession) {
  return {
    id: requireText(op, "id", session.id),
    agent: requireText(op, "agent", session.agent),
    cwd: requireAbsolutePath(op, "cwd", session.cwd),
    workspace: requireNullableText(op, "workspace", session.workspace),
    title: requireNullableText(op, "title", session.title),
    agentSessionId: requireNullableText(op, "agentSessionId", session.agentSessionId),
    createdAt: requireTimestamp(op, "createdAt", session.createdAt),
  };
}
