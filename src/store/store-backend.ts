import type { LedgerEntry } from "../processes/ledger.js";
import type { AgentProfile } from "./agent-profiles.js";
import type { JournalEvent, ReadOptions, ReplayOptions } from "./events.js";
import { encodeJson, requireCount, requireOneOf, requireText, requireTimestamp, type Json } from "./input.js";
import { StoreInputError } from "./errors.js";
import type { LifecycleRecord } from "./lifecycle-records.js";
import type { Question } from "./questions.js";
import type { NewReviewComment, ReviewComment } from "./review-comments.js";
import type { NewSession, Session, SessionPageQuery } from "./sessions.js";

/**
 * Everything Berth persists, behind one asynchronous interface with two implementations:
 * SQLite (the embedded default, one host per data directory: `sqlite-backend.ts`) and
 * PostgreSQL (a fleet of hosts sharing one database: `postgres/postgres-backend.ts`).
 * docs/fleet.md says how each maps onto it.
 *
 * Rules every implementation keeps (the contract suite, test/store-contract, checks them):
 * - A journal's seqs are 1, 2, 3... per session, drawn by the store when the write commits:
 *   never reused, never skipped by a committed write, never seen before they are committed.
 * - A {@link WriteUnit} is stored whole or not at all; units are applied in order.
 * - Every journal write and every change of a session's state carries the owner's {@link Lease};
 *   a stale epoch is refused with {@link StaleEpochError}, and nothing of it is stored.
 */
export interface StoreBackend {
  readonly kind: "sqlite" | "postgres";

  // Hosts and ownership.
  /**
   * Registers (or re-registers) a host; its heartbeat starts now. Each registration is a new
   * **incarnation** of the host id (one running process): the epoch of every session the id owns
   * is raised, so whatever an earlier process under the same id still holds is stale, and that
   * earlier process, if it still runs, can take no lease and create no session through its own
   * backend object any more (this object remembers the incarnation it registered).
   */
  registerHost(host: { id: string; url: string | null }): Promise<HostInfo>;
  /** The host is alive; false if it is not registered, or a later incarnation of it registered since (it must stop). */
  heartbeat(hostId: string): Promise<boolean>;
  listHosts(): Promise<HostInfo[]>;
  /**
   * Makes `hostId` the session's owner at a new epoch (raised), when no other live host owns it:
   * no owner, `hostId` itself (its current lease is fenced: giving it up, if that commits later,
   * matches nothing), or an owner whose heartbeat is older than the host TTL. Throws
   * {@link LeaseHeldError} if another live host does, `StoreNotFoundError` for an unknown session.
   */
  acquireLease(sessionId: string, hostId: string): Promise<Lease>;
  /** Gives the session up: it has no owner until the next acquisition, and a new epoch, so the old lease writes nothing more. Refused if stale. */
  giveUpLease(lease: Lease): Promise<void>;
  /** The session's owner and epoch; undefined for an unknown session, `hostId` null when unowned. */
  getLease(sessionId: string): Promise<Lease | undefined>;
  /** The leases `hostId` holds now, by session id. */
  listLeases(hostId: string): Promise<Lease[]>;

  // Sessions.
  /** Creates the session owned by `hostId`, at epoch 1. */
  createSession(session: NewSession, hostId: string): Promise<Lease>;
  getSession(id: string): Promise<Session | undefined>;
  /** Newest (most recently updated) first; only those in `cwd` if given. */
  listSessions(filter?: { cwd?: string }): Promise<Session[]>;
  /** Up to `limit` of that list (of `cwd`, `agent` if given) after `after`: read by keyset from an index, never by offset. */
  sessionPage(query: SessionPageQuery): Promise<Session[]>;
  /**
   * The sessions of `ids` that exist (in no particular order), each with its lease as of the same read and its pending
   * questions, oldest first: what changed, read in one round whatever their number.
   */
  readSessions(ids: readonly string[]): Promise<SessionRead[]>;
  /** Changes a session's state; refused if the lease is stale. */
  updateSession(lease: Lease, changes: SessionChanges): Promise<void>;
  /** Deletes the session with its journal and questions; refused if the lease is stale. */
  deleteSession(lease: Lease): Promise<void>;

  // The journal.
  /** Stores each unit whole or not at all, in order; one unit's failure costs only that unit. */
  write(units: readonly WriteUnit[]): Promise<UnitOutcome[]>;
  /** The seq of the session's newest event, 0 if none; throws `StoreNotFoundError` for an unknown session. */
  lastSeq(sessionId: string): Promise<number>;
  /** Events in seq order (after `after`, at most `limit`). */
  readEvents(sessionId: string, options?: ReadOptions): Promise<JournalEvent[]>;
  /** Every event in seq order, a page at a time: a huge journal is never in memory at once. */
  replay(sessionId: string, options?: ReplayOptions): AsyncIterable<JournalEvent>;

  // Questions (asked through a write unit, with their `question_asked` event).
  getQuestion(id: string): Promise<Question | undefined>;
  /** Pending questions, oldest first: all of them, or one session's. */
  listPendingQuestions(sessionId?: string): Promise<Question[]>;
  /** Every question of the session, whatever its state, oldest first. */
  listQuestions(sessionId: string): Promise<Question[]>;
  /**
   * Resolves a pending question and journals `question_resolved` in the same transaction; the
   * first resolution wins, fleet-wide (`won: false` for every later one, nothing stored). With a
   * lease (the owner's host always passes one, whatever the resolution) it is refused if the
   * lease is stale; `seq`, if given, is the event's (as for a unit's events).
   */
  resolveQuestion(resolution: QuestionResolution, lease?: Lease): Promise<{ won: boolean; seq: number | null }>;
  /** After a restart: the pending questions of the sessions `hostId` owns become orphaned; returns them, oldest first. */
  orphanPendingQuestions(hostId: string, reason: string, at: number): Promise<Question[]>;

  // Review comments on a session's changes (deleted with the session); any host may write them.
  /** Throws `StoreNotFoundError` for an unknown session. */
  addReviewComment(comment: NewReviewComment): Promise<void>;
  /** The session's comments, oldest first, sent or not. */
  listReviewComments(sessionId: string): Promise<ReviewComment[]>;
  /** Replaces an unsent comment's body; false if there is no such unsent comment (a sent one stays as the agent was told it). */
  editReviewComment(id: string, body: string): Promise<boolean>;
  /** False if there was no such comment. */
  deleteReviewComment(id: string): Promise<boolean>;
  /** Marks those of `ids` still unsent as sent at `at`; returns how many it marked. */
  markReviewCommentsSent(ids: readonly string[], at: number): Promise<number>;

  // Lifecycle records (fleet-wide, numbered by the store). Written by `hostId`, refused (`HostSupersededError`) once a later process registered under it.
  appendRecord(hostId: string, kind: string, payload: unknown, at: number): Promise<number>;
  /** The newest `limit` records, oldest first. */
  recentRecords(limit: number): Promise<LifecycleRecord[]>;
  recordsAfter(id: number, limit?: number): Promise<LifecycleRecord[]>;
  pruneRecordsBefore(hostId: string, at: number): Promise<number>;

  // The process-group ledger: each host's own (its writes refused once a later process registered under the id).
  addGroup(hostId: string, group: LedgerEntry): Promise<void>;
  deleteGroup(hostId: string, pgid: number): Promise<void>;
  listGroups(hostId: string): Promise<LedgerEntry[]>;

  // Agents' initialize answers (put by `hostId`, refused once a later process registered under it).
  putAgentProfile(hostId: string, profile: AgentProfile): Promise<void>;
  getAgentProfile(agent: string): Promise<AgentProfile | undefined>;

  /**
   * Calls `listener` after each committed change, from any host of the fleet (PostgreSQL:
   * `LISTEN/NOTIFY`). A wake-up, not a copy: the listener reads what changed. Returns the way to stop.
   */
  subscribe(listener: (change: StoreChange) => void): Promise<() => Promise<void>>;

  close(): Promise<void>;
}

/** The owner of a session and its fencing token: higher epochs supersede lower ones. */
/** A session as {@link StoreBackend.readSessions} reads it. */
export interface SessionRead {
  readonly session: Session;
  readonly lease: Lease;
  readonly pendingQuestions: readonly Question[];
}

export interface Lease {
  readonly sessionId: string;
  /** Null while the session has no owner (given up, or never taken). */
  readonly hostId: string | null;
  readonly epoch: number;
}

export interface HostInfo {
  readonly id: string;
  /** Where its peers reach it (host-to-host relays); null for a host that serves no peers. */
  readonly url: string | null;
  /** 1 for the id's first registration, one more for each later one (a restarted process). */
  readonly incarnation: number;
  readonly registeredAt: number;
  readonly heartbeatAt: number;
  /** Its heartbeat is within the host TTL: its leases stand. */
  readonly alive: boolean;
}

export interface SessionChanges {
  readonly agentRequest?: object | null;
  readonly agentState?: object | null;
  readonly worktree?: object | null;
  readonly title?: string | null;
  readonly agentSessionId?: string | null;
  /** Moves `updatedAt`, never backwards. */
  readonly touchedAt?: number;
}

/**
 * One event to append. Its seq is the store's to draw, unless `seq` is given (the host's journal
 * numbers its events in memory and publishes those numbers): then that seq is stored, the
 * session's last seq moves up to it, and a seq already taken refuses the unit. A unit's events
 * carry seqs all or none.
 */
interface NewEvent {
  readonly seq?: number;
  readonly kind: string;
  /** Encoded as JSON, unless `text` is given. */
  readonly payload?: unknown;
  /** The payload as JSON text already (an agent's update as its row, `update-row.ts`): stored as it is. */
  readonly text?: string;
  readonly at: number;
}

/** What is stored together, all or nothing, under the session owner's lease. */
export interface WriteUnit {
  readonly lease: Lease;
  readonly events: readonly NewEvent[];
  /** A question asked, stored with the events (its `question_asked`). */
  readonly question?: { readonly id: string; readonly kind: "permission" | "elicitation"; readonly request: unknown; readonly askedAt: number };
  /** Moves the session's `updatedAt` (never backwards). */
  readonly touchedAt?: number;
  /** The session's title, only if it has none yet. */
  readonly titleIfNone?: string;
}

/** A {@link WriteUnit} checked and encoded as both backends store it: payloads as JSON text, absent fields null. */
export interface EncodedUnit {
  readonly lease: Lease;
  /** The seqs the host's journal gave its events, or null: drawn by the store. */
  readonly seqs: number[] | null;
  readonly kinds: string[];
  readonly payloads: string[];
  readonly ats: number[];
  readonly question: { id: string; kind: string; request: string; askedAt: number } | null;
  readonly touchedAt: number | null;
  readonly titleIfNone: string | null;
}

/** Checks and encodes a unit; throws `StoreInputError` naming the bad field (nothing of the unit is stored then). */
export function encodeWriteUnit(unit: WriteUnit): EncodedUnit {
  const op = "events.write";
  const sessionId = requireText(op, "lease.sessionId", unit.lease.sessionId);
  const epoch = requireCount(op, "lease.epoch", unit.lease.epoch);
  const seqs = givenSeqs(op, unit.events);
  const kinds: string[] = [];
  const payloads: string[] = [];
  const ats: number[] = [];
  for (const event of unit.events) {
    kinds.push(requireText(op, "kind", event.kind));
    payloads.push(event.text ?? encodeJson(op, "payload", event.payload));
    ats.push(requireTimestamp(op, "at", event.at));
  }
  const question = unit.question && {
    id: requireText(op, "question.id", unit.question.id),
    kind: requireOneOf(op, "question.kind", unit.question.kind, ["permission", "elicitation"] as const),
    request: encodeJson(op, "question.request", unit.question.request),
    askedAt: requireTimestamp(op, "question.askedAt", unit.question.askedAt),
  };
  const touchedAt = unit.touchedAt === undefined ? null : requireTimestamp(op, "touchedAt", unit.touchedAt);
  const titleIfNone = unit.titleIfNone === undefined ? null : requireText(op, "titleIfNone", unit.titleIfNone);
  return { lease: { ...unit.lease, sessionId, epoch }, seqs, kinds, payloads, ats, question: question ?? null, touchedAt, titleIfNone };
}

/** The seqs a unit's events were given (null if none was: the store draws them); a unit that gives some and not others is refused. */
function givenSeqs(op: string, events: readonly NewEvent[]): number[] | null {
  const given = events.filter((event) => event.seq !== undefined).length;
  if (given === 0) return null;
  if (given < events.length) throw new StoreInputError(op, "a unit's events carry seqs all or none");
  return events.map((event) => requireCount(op, "seq", event.seq));
}

export type UnitOutcome = { readonly ok: true; readonly seqs: readonly number[] } | { readonly ok: false; readonly error: Error };

export type QuestionResolution =
  | { readonly questionId: string; readonly state: "answered"; readonly answer: Json; readonly at: number; readonly seq?: number }
  /** `orphaned`: by the owner, after a restart, for a question whose agent process is gone. */
  | { readonly questionId: string; readonly state: "cancelled" | "orphaned"; readonly reason: string; readonly at: number; readonly seq?: number };

/** What a subscriber is woken for. */
export type StoreChange =
  | { readonly type: "events"; readonly sessionId: string; readonly lastSeq: number }
  | { readonly type: "session"; readonly sessionId: string }
  | { readonly type: "question"; readonly sessionId: string; readonly questionId: string }
  | { readonly type: "lease"; readonly sessionId: string; readonly hostId: string | null; readonly epoch: number }
  /** A lifecycle record appended by `hostId` (its id is fleet-wide). */
  | { readonly type: "record"; readonly id: number; readonly hostId: string }
  /** Changes may have gone untold (the listening connection was lost): read everything again. */
  | { readonly type: "missed" };

/** A write carried an epoch older than the session's: another host (or a later incarnation) owns it now. Nothing was stored. */
export class StaleEpochError extends Error {
  override readonly name = "StaleEpochError";
  constructor(
    readonly operation: string,
    readonly sessionId: string,
    readonly epoch: number,
    readonly current: { readonly hostId: string | null; readonly epoch: number },
  ) {
    const owner = current.hostId === null ? "no host" : `host ${JSON.stringify(current.hostId)}`;
    super(`${operation}: session ${JSON.stringify(sessionId)} is at epoch ${current.epoch} (owned by ${owner}); epoch ${epoch} is stale`);
  }
}

/** A later process registered under this host id: this one may take no lease and create no session. */
export class HostSupersededError extends Error {
  override readonly name = "HostSupersededError";
  constructor(
    readonly operation: string,
    readonly hostId: string,
    readonly incarnation: number,
  ) {
    super(`${operation}: host ${JSON.stringify(hostId)} incarnation ${incarnation} was superseded by a later registration of the same id`);
  }
}

/** A live host owns the session: it cannot be taken. */
export class LeaseHeldError extends Error {
  override readonly name = "LeaseHeldError";
  constructor(
    readonly sessionId: string,
    readonly owner: Lease,
  ) {
    super(`session ${JSON.stringify(sessionId)} is owned by live host ${JSON.stringify(owner.hostId)} (epoch ${owner.epoch})`);
  }
}
