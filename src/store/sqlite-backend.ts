import type { LedgerEntry } from "../processes/ledger.js";
import type { AgentProfile } from "./agent-profiles.js";
import { openDatabase, type OpenOptions, type SqliteDatabase } from "./database.js";
import { StoreNotFoundError, StoreWriteError } from "./errors.js";
import type { JournalEvent, ReadOptions, ReplayOptions } from "./events.js";
import { encodeJson, requireCount, requireNullableText, requireText, requireTimestamp } from "./input.js";
import type { LifecycleRecord } from "./lifecycle-records.js";
import type { Question } from "./questions.js";
import { checkedComment, type NewReviewComment, type ReviewComment } from "./review-comments.js";
import { checkedNewSession, type NewSession, type Session, type SessionPageQuery } from "./sessions.js";
import {
  encodeWriteUnit,
  LeaseHeldError,
  StaleEpochError,
  type EncodedUnit,
  type HostInfo,
  type Lease,
  type QuestionResolution,
  type SessionChanges,
  type SessionRead,
  type StoreBackend,
  type StoreChange,
  type UnitOutcome,
  type WriteUnit,
} from "./store-backend.js";
import { Store } from "./store.js";
import {
  BatchApplier,
  callOp,
  flatten,
  StoreBlockedError,
  type BatchResult,
  type StoreCallName,
  type StoreCalls,
  type WriteOp,
} from "./write-batch.js";
import { guardWrite } from "./write-guard.js";

export interface SqliteBackendOptions extends OpenOptions {
  /** A host whose heartbeat is older than this has lost its leases to whoever takes them (default 30 s). */
  readonly hostTtlMs?: number;
  /** The clock of heartbeats (default `Date.now`). */
  readonly now?: () => number;
}

const DEFAULT_HOST_TTL_MS = 30_000;

interface HostEntry {
  readonly id: string;
  readonly url: string | null;
  readonly incarnation: number;
  readonly registeredAt: number;
  heartbeatAt: number;
}

/**
 * The SQLite store behind the asynchronous interface, on one connection: reads through the synchronous
 * store (`store.ts`), every write through the one writer's {@link BatchApplier}, the very code the SQLite
 * host's writer thread runs (`journal-writer-worker.ts`), as the same ops the host queues. So the contract
 * suite's SQLite half tests the production write path; only the threading differs (here the caller's).
 *
 * A SQLite file has one host (the data directory's OS lock), so hosts and leases live in this object's
 * memory: they fence what this process writes (an owner that gave a session up, or lost it to a later
 * acquisition, writes nothing more), and die with it, as every lease of a dead host does. The batch
 * applier knows no leases: the host has no one to fence on SQLite (its writes are its own, in order), so
 * the lease is checked here, synchronously, just before the batch is applied ({@link fence}). Nor does it
 * number events: the host's journal does; here the events a caller gave no seq are numbered in the
 * transaction that applies them ({@link numberAndApply}).
 */
export class SqliteBackend implements StoreBackend {
  readonly kind = "sqlite";
  private readonly hosts = new Map<string, HostEntry>();
  private readonly leases = new Map<string, { hostId: string | null; epoch: number }>();
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private readonly hostTtlMs: number;
  private readonly now: () => number;

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly store: Store,
    private readonly applier: BatchApplier,
    options: SqliteBackendOptions,
  ) {
    this.hostTtlMs = requireCount("store.open", "hostTtlMs", options.hostTtlMs ?? DEFAULT_HOST_TTL_MS);
    this.now = options.now ?? Date.now;
  }

  /** Opens (creating if needed) the file: one connection, its schema brought up to date. */
  static open(path: string, options: SqliteBackendOptions = {}): SqliteBackend {
    const db = openDatabase(path, options);
    const store = Store.fromDatabase(db);
    return new SqliteBackend(db, store, new BatchApplier(db), options);
  }

  // Hosts and ownership.

  async registerHost(host: { id: string; url: string | null }): Promise<HostInfo> {
    const op = "hosts.register";
    const at = this.now();
    const id = requireText(op, "id", host.id);
    const incarnation = (this.hosts.get(id)?.incarnation ?? 0) + 1;
    const entry = { id, url: requireNullableText(op, "url", host.url), incarnation, registeredAt: at, heartbeatAt: at };
    this.hosts.set(entry.id, entry);
    // A new incarnation: what the id's earlier one held is stale.
    if (incarnation > 1) for (const lease of await this.listLeases(id)) this.setLease(lease.sessionId, id, lease.epoch + 1);
    return { ...entry, alive: true };
  }

  async heartbeat(hostId: string): Promise<boolean> {
    const entry = this.hosts.get(requireText("hosts.heartbeat", "hostId", hostId));
    if (entry) entry.heartbeatAt = this.now();
    return entry !== undefined;
  }

  async listHosts(): Promise<HostInfo[]> {
    return [...this.hosts.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).map((host) => ({ ...host, alive: this.alive(host.id) }));
  }

  async acquireLease(sessionId: string, hostId: string): Promise<Lease> {
    const op = "leases.acquire";
    const host = requireText(op, "hostId", hostId);
    const current = this.leaseOf(op, requireText(op, "sessionId", sessionId));
    if (current.hostId !== null && current.hostId !== host && this.alive(current.hostId)) throw new LeaseHeldError(sessionId, current);
    return this.setLease(sessionId, host, current.epoch + 1);
  }

  async giveUpLease(lease: Lease): Promise<void> {
    this.fence("leases.giveUp", lease);
    // A new epoch: the lease given up fences nothing more in.
    this.setLease(lease.sessionId, null, lease.epoch + 1);
  }

  async getLease(sessionId: string): Promise<Lease | undefined> {
    return this.store.sessions.get(sessionId) && this.leaseOf("leases.get", sessionId);
  }

  async listLeases(hostId: string): Promise<Lease[]> {
    const host = requireText("leases.list", "hostId", hostId);
    return [...this.leases.entries()]
      .filter(([, lease]) => lease.hostId === host)
      .map(([sessionId, lease]) => ({ sessionId, ...lease }))
      .sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));
  }

  // Sessions.

  async createSession(session: NewSession, hostId: string): Promise<Lease> {
    const op = "sessions.create";
    const host = requireText(op, "hostId", hostId);
    // A bad field is refused here as a `StoreInputError` (the batch would report only its message).
    checkedNewSession(op, session);
    this.applyOne(op, [callOp(op, [session])]);
    this.emit({ type: "session", sessionId: session.id });
    return this.setLease(session.id, host, 1);
  }

  async getSession(id: string): Promise<Session | undefined> {
    return this.store.sessions.get(id);
  }

  async listSessions(filter: { cwd?: string } = {}): Promise<Session[]> {
    return this.store.sessions.list(filter);
  }

  async sessionPage(query: SessionPageQuery): Promise<Session[]> {
    return this.store.sessions.page(query);
  }

  async readSessions(ids: readonly string[]): Promise<SessionRead[]> {
    return ids.flatMap((id) => {
      const session = this.store.sessions.get(id);
      return session ? [{ session, lease: this.leaseOf("sessions.read", id), pendingQuestions: this.store.questions.listPending(id) }] : [];
    });
  }

  async updateSession(lease: Lease, changes: SessionChanges): Promise<void> {
    const op = "sessions.update";
    this.fence(op, lease);
    const id = lease.sessionId;
    const set = <N extends StoreCallName>(name: N, value: unknown) =>
      value === undefined ? [] : [callOp(name, [id, value] as Parameters<StoreCalls[N]>)];
    // As the host's journal queues them: one unit, stored whole or not at all.
    this.applyOne(op, [
      ...set("sessions.setAgentRequest", changes.agentRequest),
      ...set("sessions.setAgentState", changes.agentState),
      ...set("sessions.setWorktree", changes.worktree),
      ...set("sessions.setTitle", changes.title),
      ...set("sessions.setAgentSessionId", changes.agentSessionId),
      ...(changes.touchedAt === undefined ? [] : [["t", id, changes.touchedAt, null, null, null] as const]),
    ]);
    this.emit({ type: "session", sessionId: id });
  }

  async deleteSession(lease: Lease): Promise<void> {
    const op = "sessions.delete";
    this.fence(op, lease);
    this.applyOne(op, [callOp(op, [lease.sessionId])]);
    this.leases.delete(lease.sessionId);
    this.emit({ type: "session", sessionId: lease.sessionId });
  }

  // The journal.

  async write(units: readonly WriteUnit[]): Promise<UnitOutcome[]> {
    const op = "events.write";
    const outcomes: UnitOutcome[] = [];
    // The units that pass the fence and their checks, as the host's journal queues them; by index in `units`.
    const batch: Array<{ readonly index: number; readonly unit: EncodedUnit }> = [];
    units.forEach((unit, index) => {
      try {
        this.fence(op, unit.lease);
        batch.push({ index, unit: encodeWriteUnit(unit) });
      } catch (error) {
        outcomes[index] = { ok: false, error: error as Error };
      }
    });
    let result: Applied;
    try {
      result = this.apply(
        op,
        batch.map(({ unit }) => journalOps(unit)),
      );
    } catch (error) {
      // SQLite could not write at all (the disk full, another connection's lock past the wait): nothing of the batch is stored.
      for (const { index } of batch) outcomes[index] = { ok: false, error: error as Error };
      return outcomes;
    }
    const failed = new Map(result.failed.map((failure) => [failure.unit, failure]));
    batch.forEach(({ index, unit }, position) => {
      const failure = failed.get(position);
      outcomes[index] = failure ? { ok: false, error: refusal(op, failure) } : { ok: true, seqs: unit.seqs ?? result.drawn[position]! };
    });
    units.forEach((unit, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok && outcome.seqs.length > 0) this.emit({ type: "events", sessionId: unit.lease.sessionId, lastSeq: outcome.seqs.at(-1)! });
    });
    return outcomes;
  }

  async lastSeq(sessionId: string): Promise<number> {
    return this.store.events.lastSeq(sessionId);
  }

  async readEvents(sessionId: string, options?: ReadOptions): Promise<JournalEvent[]> {
    return this.store.events.read(sessionId, options);
  }

  replay(sessionId: string, options?: ReplayOptions): AsyncIterable<JournalEvent> {
    const { events } = this.store;
    // Errors (an unknown session) surface on iteration, as PostgreSQL's do.
    return {
      async *[Symbol.asyncIterator]() {
        yield* events.replay(sessionId, options);
      },
    };
  }

  // Questions.

  async getQuestion(id: string): Promise<Question | undefined> {
    return this.store.questions.get(id);
  }

  async listPendingQuestions(sessionId?: string): Promise<Question[]> {
    return this.store.questions.listPending(sessionId);
  }

  async listQuestions(sessionId: string): Promise<Question[]> {
    return this.store.questions.listOf(sessionId);
  }

  async resolveQuestion(resolution: QuestionResolution, lease?: Lease): Promise<{ won: boolean; seq: number | null }> {
    const op = "questions.resolve";
    const question = this.store.questions.get(requireText(op, "questionId", resolution.questionId));
    if (!question) throw new StoreNotFoundError(op, "question", resolution.questionId);
    // The first resolution wins: on SQLite the host's question desk keeps that, as this check does here; nothing awaits
    // between it and the batch, and the file has no other writer.
    if (question.state !== "pending") return { won: false, seq: null };
    if (lease) this.fence(op, lease);
    const answerOrReason = resolution.state === "answered" ? resolution.answer : resolution.reason;
    const detail = resolution.state === "answered" ? { answer: resolution.answer } : { reason: resolution.reason };
    const payload = { questionId: question.id, state: resolution.state, ...detail };
    const { result, seqs } = this.applyOne(op, [
      resolvedEvent(question.sessionId, resolution.seq ?? null, payload, resolution.at),
      callOp(op, [question.id, resolution.state, answerOrReason, resolution.at]),
    ]);
    const seq = resolution.seq ?? seqs[0]!;
    this.emit({ type: "question", sessionId: question.sessionId, questionId: question.id });
    this.emit({ type: "events", sessionId: question.sessionId, lastSeq: seq });
    return { won: result === true, seq };
  }

  async orphanPendingQuestions(hostId: string, reason: string, at: number): Promise<Question[]> {
    const op = "questions.orphanPending";
    requireText(op, "hostId", hostId);
    // The file's one host owns every session in it. As the host orphans them after a restart (`abandoned-turns.ts`):
    // each question's event is stored with its new state, or neither is.
    const pending = this.store.questions.listPending();
    const { failed } = this.apply(
      op,
      pending.map((question) => [
        resolvedEvent(question.sessionId, null, { questionId: question.id, state: "orphaned", reason }, at),
        callOp("questions.resolve", [question.id, "orphaned", reason, at]),
      ]),
    );
    const refused = new Set(failed.map((failure) => failure.unit));
    const orphaned = pending.flatMap((question, unit) => (refused.has(unit) ? [] : [this.store.questions.get(question.id)!]));
    for (const question of orphaned) this.emit({ type: "question", sessionId: question.sessionId, questionId: question.id });
    for (const sessionId of new Set(orphaned.map((question) => question.sessionId)))
      this.emit({ type: "events", sessionId, lastSeq: this.store.events.lastSeq(sessionId) });
    return orphaned;
  }

  // Review comments.

  async addReviewComment(comment: NewReviewComment): Promise<void> {
    const op = "reviewComments.add";
    const checked = checkedComment(op, comment);
    if (!this.store.sessions.get(checked.sessionId)) throw new StoreNotFoundError(op, "session", checked.sessionId);
    this.applyOne(op, [callOp(op, [checked])]);
  }

  async listReviewComments(sessionId: string): Promise<ReviewComment[]> {
    return this.store.reviewComments.listOf(sessionId);
  }

  async editReviewComment(id: string, body: string): Promise<boolean> {
    return this.call("reviewComments.edit", [id, body]);
  }

  async deleteReviewComment(id: string): Promise<boolean> {
    return this.call("reviewComments.delete", [id]);
  }

  async markReviewCommentsSent(ids: readonly string[], at: number): Promise<number> {
    return this.call("reviewComments.markSent", [ids, at]);
  }

  // Lifecycle records.

  async appendRecord(hostId: string, kind: string, payload: unknown, at: number): Promise<number> {
    // Numbered as the host numbers its records: after the highest id ever given.
    const op = "lifecycleRecords.append";
    const id = this.store.lifecycleRecords.lastId() + 1;
    this.applyOne(op, [["r", id, requireText(op, "kind", kind), encodeJson(op, "payload", payload), requireTimestamp(op, "at", at), null]]);
    this.emit({ type: "record", id, hostId });
    return id;
  }

  async recentRecords(limit: number): Promise<LifecycleRecord[]> {
    return this.store.lifecycleRecords.recent(limit);
  }

  async recordsAfter(id: number, limit?: number): Promise<LifecycleRecord[]> {
    return this.store.lifecycleRecords.after(id, limit);
  }

  async pruneRecordsBefore(_hostId: string, at: number): Promise<number> {
    return this.call("lifecycleRecords.pruneBefore", [at]);
  }

  // The process-group ledger: the file's one host's.

  async addGroup(_hostId: string, group: LedgerEntry): Promise<void> {
    this.call("processGroups.add", [group]);
  }

  async deleteGroup(_hostId: string, pgid: number): Promise<void> {
    this.call("processGroups.delete", [pgid]);
  }

  async listGroups(_hostId: string): Promise<LedgerEntry[]> {
    return this.store.processGroups.list();
  }

  // Agents' initialize answers.

  async putAgentProfile(_hostId: string, profile: AgentProfile): Promise<void> {
    this.call("agentProfiles.put", [profile]);
  }

  async getAgentProfile(agent: string): Promise<AgentProfile | undefined> {
    return this.store.agentProfiles.get(agent);
  }

  async subscribe(listener: (change: StoreChange) => void): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    return async () => {
      this.listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.store.close();
  }

  /**
   * Applies units of ops as the host's writer thread does, in one transaction that numbers their events first;
   * throws a `StoreWriteError` if SQLite could not write at all. The write lock is taken before the seqs are read,
   * so another connection to the file never draws the same ones.
   */
  private apply(op: string, units: readonly (readonly WriteOp[])[]): Applied {
    if (units.length === 0) return { failed: [], results: [], drawn: [] };
    try {
      return guardWrite(op, () => this.db.transaction(() => this.numberAndApply(units)).immediate());
    } catch (error) {
      if (error instanceof StoreBlockedError) throw new StoreWriteError(op, error.code, error.message, { cause: error });
      throw error;
    }
  }

  /**
   * Numbers the events given no seq after their session's last (`numbered`) and applies the units, in the caller's
   * transaction. A refused unit that drew seqs would leave a gap: the try is undone (its savepoint) and the other units
   * numbered and applied again without it, until none refused drew any.
   */
  private numberAndApply(units: readonly (readonly WriteOp[])[]): Applied {
    const refused = new Map<number, BatchResult["failed"][number]>();
    for (;;) {
      const kept = units.flatMap((_, index) => (refused.has(index) ? [] : [index]));
      const { ops, drawn } = numbered(
        kept.map((index) => units[index]!),
        (sessionId) => this.store.events.lastSeq(sessionId),
      );
      const refuse = (failed: BatchResult["failed"]) => {
        for (const failure of failed) refused.set(kept[failure.unit]!, { ...failure, unit: kept[failure.unit]! });
      };
      try {
        const results = this.db.transaction(() => {
          const { failed, results = [] } = this.applier.apply(flatten(ops));
          if (failed.some((failure) => drawn[failure.unit]!.length > 0)) throw new Renumber(failed);
          refuse(failed);
          return results;
        })();
        const position = new Map(kept.map((index, at) => [index, at]));
        return {
          failed: [...refused.values()].sort((x, y) => x.unit - y.unit),
          results: units.map((_, index) => results[position.get(index) ?? -1]),
          drawn: units.map((_, index) => (refused.has(index) ? [] : drawn[position.get(index)!]!)),
        };
      } catch (error) {
        if (!(error instanceof Renumber)) throw error;
        refuse(error.failed);
      }
    }
  }

  /** One unit: what its last call returned and the seqs drawn for its events; throws its refusal. */
  private applyOne(op: string, ops: readonly WriteOp[]): { result: unknown; seqs: readonly number[] } {
    const { failed, results, drawn } = this.apply(op, [ops]);
    if (failed[0]) throw refusal(op, failed[0]);
    return { result: results[0], seqs: drawn[0]! };
  }

  /** A store method run as the host's journal queues it (one `c` op), returning what it returned. */
  private call<N extends StoreCallName>(name: N, args: Parameters<StoreCalls[N]>): ReturnType<StoreCalls[N]> {
    return this.applyOne(name, [callOp(name, args)]).result as ReturnType<StoreCalls[N]>;
  }

  private alive(hostId: string): boolean {
    const host = this.hosts.get(hostId);
    return host !== undefined && host.heartbeatAt + this.hostTtlMs > this.now();
  }

  /** A session's lease; one this process never handed out is unowned at epoch 0 (the previous run's leases died with it). */
  private leaseOf(op: string, sessionId: string): Lease {
    if (!this.store.sessions.get(sessionId)) throw new StoreNotFoundError(op, "session", sessionId);
    const lease = this.leases.get(sessionId) ?? { hostId: null, epoch: 0 };
    return { sessionId, ...lease };
  }

  private setLease(sessionId: string, hostId: string | null, epoch: number): Lease {
    this.leases.set(sessionId, { hostId, epoch });
    this.emit({ type: "lease", sessionId, hostId, epoch });
    return { sessionId, hostId, epoch };
  }

  private fence(op: string, lease: Lease): void {
    requireCount(op, "lease.epoch", lease.epoch);
    const current = this.leaseOf(op, requireText(op, "lease.sessionId", lease.sessionId));
    if (current.epoch !== lease.epoch) throw new StaleEpochError(op, lease.sessionId, lease.epoch, current);
  }

  private emit(change: StoreChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

/** What a batch of units came to: those refused, and by unit what its last call returned and the seqs drawn for its events. */
interface Applied {
  readonly failed: BatchResult["failed"];
  readonly results: readonly unknown[];
  readonly drawn: ReadonlyArray<readonly number[]>;
}

/** A try to undo: units that drew seqs were refused. */
class Renumber extends Error {
  constructor(readonly failed: BatchResult["failed"]) {
    super("units that drew seqs were refused");
  }
}

/**
 * The units with each event given no seq (null) numbered as the store draws seqs: after the highest of its session,
 * stored (`lastSeq`) or earlier in the units; and by unit, the seqs drawn.
 */
function numbered(units: readonly (readonly WriteOp[])[], lastSeq: (sessionId: string) => number): { ops: WriteOp[][]; drawn: number[][] } {
  const highest = new Map<string, number>();
  const drawn: number[][] = [];
  const ops = units.map((unit) => {
    const seqs: number[] = [];
    drawn.push(seqs);
    return unit.map((op): WriteOp => {
      if (op[0] !== "e") return op;
      const [code, sessionId, given, ...rest] = op;
      const high = highest.get(sessionId as string) ?? lastSeq(sessionId as string);
      const seq = (given as number | null) ?? high + 1;
      highest.set(sessionId as string, Math.max(high, seq));
      if (given !== null) return op;
      seqs.push(seq);
      return [code, sessionId, seq, ...rest];
    });
  });
  return { ops, drawn };
}

/** A unit as the host's journal queues it: its events (at their seqs, or null: numbered here), a question, a touch, a title. */
function journalOps(unit: EncodedUnit): WriteOp[] {
  const id = unit.lease.sessionId;
  const ops: WriteOp[] = unit.kinds.map((kind, i) => ["e", id, unit.seqs?.[i] ?? null, kind, unit.payloads[i]!, unit.ats[i]!]);
  if (unit.question) ops.push(["q", unit.question.id, id, unit.question.kind, unit.question.request, unit.question.askedAt]);
  if (unit.touchedAt !== null) ops.push(["t", id, unit.touchedAt, null, null, null]);
  if (unit.titleIfNone !== null) ops.push(["n", id, unit.titleIfNone, null, null, null]);
  return ops;
}

function resolvedEvent(sessionId: string, seq: number | null, payload: object, at: number): WriteOp {
  return ["e", sessionId, seq, "question_resolved", JSON.stringify(payload), at];
}

/** A unit the batch refused, as the store's error: a row SQLite refused keeps its code. */
function refusal(op: string, failure: BatchResult["failed"][number]): Error {
  if (failure.code === undefined) return new Error(`${op}: ${failure.error}`);
  const detail = failure.error.startsWith(`${failure.code}: `) ? failure.error.slice(failure.code.length + 2) : failure.error;
  return new StoreWriteError(op, failure.code, detail);
}
