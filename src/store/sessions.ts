import type { SqliteDatabase } from "./database.js";
import { StoreNotFoundError } from "./errors.js";
import { requireAbsolutePath, requireNullableText, requireText, requireTimestamp, type Json } from "./input.js";
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
  createdAt: number;
}

interface SessionRow extends Omit<Session, "agentRequest" | "agentState"> {
  agentRequest: string | null;
  agentState: string | null;
}

const COLUMNS = `id, agent, cwd, workspace, title, agent_session_id AS agentSessionId,
  agent_request AS agentRequest, agent_state AS agentState, created_at AS createdAt, updated_at AS updatedAt`;
const NEWEST_FIRST = "ORDER BY updated_at DESC, created_at DESC, id";

export class SessionStore {
  readonly #insert;
  readonly #get;
  readonly #listAll;
  readonly #listByCwd;
  readonly #setTitle;
  readonly #setAgentSessionId;
  readonly #setAgentState;
  readonly #setAgentRequest;
  readonly #touch;
  readonly #delete;

  constructor(db: SqliteDatabase) {
    this.#insert = db.prepare<Session>(
      `INSERT INTO sessions (id, agent, cwd, workspace, title, agent_session_id, agent_request, created_at, updated_at)
       VALUES (@id, @agent, @cwd, @workspace, @title, @agentSessionId, @agentRequest, @createdAt, @updatedAt)`,
    );
    this.#get = db.prepare<[string], SessionRow>(`SELECT ${COLUMNS} FROM sessions WHERE id = ?`);
    this.#listAll = db.prepare<[], SessionRow>(`SELECT ${COLUMNS} FROM sessions ${NEWEST_FIRST}`);
    this.#listByCwd = db.prepare<[string], SessionRow>(`SELECT ${COLUMNS} FROM sessions WHERE cwd = ? ${NEWEST_FIRST}`);
    this.#setTitle = db.prepare<[string | null, string]>("UPDATE sessions SET title = ? WHERE id = ?");
    this.#setAgentSessionId = db.prepare<[string | null, string]>("UPDATE sessions SET agent_session_id = ? WHERE id = ?");
    // Never backwards: a late, out-of-order touch must not make a session look older than it is.
    this.#setAgentRequest = db.prepare<[string | null, string]>("UPDATE sessions SET agent_request = ? WHERE id = ?");
    this.#setAgentState = db.prepare<[string | null, string]>("UPDATE sessions SET agent_state = ? WHERE id = ?");
    this.#touch = db.prepare<[number, string]>("UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?");
    this.#delete = db.prepare<[string]>("DELETE FROM sessions WHERE id = ?");
  }

  create(session: NewSession): Session {
    const op = "sessions.create";
    const row: Session = {
      id: requireText(op, "id", session.id),
      agent: requireText(op, "agent", session.agent),
      cwd: requireAbsolutePath(op, "cwd", session.cwd),
      workspace: requireNullableText(op, "workspace", session.workspace),
      title: requireNullableText(op, "title", session.title),
      agentSessionId: requireNullableText(op, "agentSessionId", session.agentSessionId),
      agentRequest: (session.agentRequest ?? null) as Json | null,
      agentState: null,
      createdAt: requireTimestamp(op, "createdAt", session.createdAt),
      updatedAt: session.createdAt,
    };
    guardWrite(op, () => this.#insert.run({ ...row, agentRequest: jsonText(row.agentRequest), agentState: null }));
    return row;
  }

  get(id: string): Session | undefined {
    const row = this.#get.get(id);
    return row && sessionOf(row);
  }

  /** Newest (most recently updated) first; only those in `cwd` if given. */
  list(filter: { cwd?: string } = {}): Session[] {
    return (filter.cwd === undefined ? this.#listAll.all() : this.#listByCwd.all(filter.cwd)).map(sessionOf);
  }

  setAgentRequest(id: string, request: object | null): void {
    this.#update("sessions.setAgentRequest", id, () => this.#setAgentRequest.run(jsonText(request), id).changes);
  }

  setAgentState(id: string, state: object | null): void {
    this.#update("sessions.setAgentState", id, () => this.#setAgentState.run(jsonText(state), id).changes);
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

  #update(op: string, id: string, update: () => number): void {
    if (guardWrite(op, update) === 0) throw new StoreNotFoundError(op, "session", id);
  }
}

function jsonText(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

function sessionOf(row: SessionRow): Session {
  return {
    ...row,
    agentRequest: row.agentRequest === null ? null : (JSON.parse(row.agentRequest) as Json),
    agentState: row.agentState === null ? null : (JSON.parse(row.agentState) as Json),
  };
}
