import type { LedgerEntry } from "../processes/ledger.js";
import type { AgentProfile } from "./agent-profiles.js";
import { StoreNotFoundError } from "./errors.js";
import type { JournalEvent, ReadOptions, ReplayOptions } from "./events.js";
import { requireCount, requireNullableText, requireText } from "./input.js";
import type { LifecycleRecord } from "./lifecycle-records.js";
import type { Question } from "./questions.js";
import type { NewReviewComment, ReviewComment } from "./review-comments.js";
import type { NewSession, Session, SessionPageQuery } from "./sessions.js";
import {
  LeaseHeldError,
  StaleEpochError,
  givenSeqs,
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
import type { Store } from "./store.js";

export interface SqliteBackendOptions {
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
 * The SQLite store (`store.ts`, synchronous) behind the asynchronous interface. A SQLite file
 * has one host (the data directory's OS lock), so hosts and leases live in this object's
 * memory: they fence what this process writes (an owner that gave a session up, or lost it to a
 * later acquisition, writes nothing more), and die with it, as every lease of a dead host does.
 * Each call is one short SQLite transaction on the caller's thread; in the host, the one
 * writer (src/host/journal.ts) applies the journal's units off the event loop.
 */
export class SqliteBackend implements StoreBackend {
  readonly kind = "sqlite";
  private readonly hosts = new Map<string, HostEntry>();
  private readonly leases = new Map<string, { hostId: string | null; epoch: number }>();
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private readonly hostTtlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    options: SqliteBackendOptions = {},
  ) {
    this.hostTtlMs = requireCount("store.open", "hostTtlMs", options.hostTtlMs ?? DEFAULT_HOST_TTL_MS);
    this.now = options.now ?? Date.now;
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
    const host = requireText("sessions.create", "hostId", hostId);
    this.store.sessions.create(session);
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
    this.fence("sessions.update", lease);
    const { sessions } = this.store;
    const id = lease.sessionId;
    this.store.transaction(() => {
      if (changes.agentRequest !== undefined) sessions.setAgentRequest(id, changes.agentRequest);
      if (changes.agentState !== undefined) sessions.setAgentState(id, changes.agentState);
      if (changes.worktree !== undefined) sessions.setWorktree(id, changes.worktree);
      if (changes.title !== undefined) sessions.setTitle(id, changes.title);
      if (changes.agentSessionId !== undefined) sessions.setAgentSessionId(id, changes.agentSessionId);
      if (changes.touchedAt !== undefined) sessions.touch(id, changes.touchedAt);
    });
    this.emit({ type: "session", sessionId: id });
  }

  async deleteSession(lease: Lease): Promise<void> {
    this.fence("sessions.delete", lease);
    this.store.sessions.delete(lease.sessionId);
    this.leases.delete(lease.sessionId);
    this.emit({ type: "session", sessionId: lease.sessionId });
  }

  // The journal.

  async write(units: readonly WriteUnit[]): Promise<UnitOutcome[]> {
    let outcomes: UnitOutcome[] = [];
    try {
      // One transaction for the batch (as the one writer commits a turn of the event loop), a savepoint per unit.
      this.store.transaction(() => {
        outcomes = units.map((unit) => {
          try {
            this.fence("events.write", unit.lease);
            return { ok: true, seqs: this.store.transaction(() => this.applyUnit(unit)) };
          } catch (error) {
            return { ok: false, error: error as Error };
          }
        });
      });
    } catch (error) {
      // The commit itself failed (disk full, I/O): nothing of the batch is stored.
      return units.map(() => ({ ok: false, error: error as Error }));
    }
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
    const { questions, events } = this.store;
    const question = questions.get(requireText(op, "questionId", resolution.questionId));
    if (!question) throw new StoreNotFoundError(op, "question", resolution.questionId);
    if (lease && question.state === "pending") this.fence(op, lease);
    const outcome = this.store.transaction(() => {
      const won =
        resolution.state === "answered"
          ? questions.resolve(question.id, "answered", resolution.answer, resolution.at)
          : questions.resolve(question.id, resolution.state, resolution.reason, resolution.at);
      if (!won) return { won, seq: null };
      const detail = resolution.state === "answered" ? { answer: resolution.answer } : { reason: resolution.reason };
      const payload = { questionId: question.id, state: resolution.state, ...detail };
      if (resolution.seq === undefined) return { won, seq: events.append(question.sessionId, "question_resolved", payload, resolution.at) };
      events.appendSequenced([{ sessionId: question.sessionId, seq: resolution.seq, kind: "question_resolved", payload, at: resolution.at }]);
      return { won, seq: resolution.seq };
    });
    if (outcome.seq !== null) {
      this.emit({ type: "question", sessionId: question.sessionId, questionId: question.id });
      this.emit({ type: "events", sessionId: question.sessionId, lastSeq: outcome.seq });
    }
    return outcome;
  }

  async orphanPendingQuestions(hostId: string, reason: string, at: number): Promise<Question[]> {
    requireText("questions.orphanPending", "hostId", hostId);
    const { questions, events } = this.store;
    // The file's one host owns every session in it; each question's event is stored with its new state, or neither is.
    const orphaned = this.store.transaction(() => {
      const all = questions.orphanAllPending(reason, at);
      for (const question of all) events.append(question.sessionId, "question_resolved", { questionId: question.id, state: "orphaned", reason }, at);
      return all;
    });
    for (const question of orphaned) this.emit({ type: "question", sessionId: question.sessionId, questionId: question.id });
    for (const sessionId of new Set(orphaned.map((question) => question.sessionId)))
      this.emit({ type: "events", sessionId, lastSeq: events.lastSeq(sessionId) });
    return orphaned;
  }

  // Review comments.

  async addReviewComment(comment: NewReviewComment): Promise<void> {
    this.store.reviewComments.add(comment);
  }

  async listReviewComments(sessionId: string): Promise<ReviewComment[]> {
    return this.store.reviewComments.listOf(sessionId);
  }

  async editReviewComment(id: string, body: string): Promise<boolean> {
    return this.store.reviewComments.edit(id, body);
  }

  async deleteReviewComment(id: string): Promise<boolean> {
    return this.store.reviewComments.delete(id);
  }

  async markReviewCommentsSent(ids: readonly string[], at: number): Promise<number> {
    return this.store.reviewComments.markSent(ids, at);
  }

  // Lifecycle records.

  async appendRecord(hostId: string, kind: string, payload: unknown, at: number): Promise<number> {
    const id = this.store.lifecycleRecords.append(kind, payload, at);
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
    return this.store.lifecycleRecords.pruneBefore(at);
  }

  // The process-group ledger: the file's one host's.

  async addGroup(_hostId: string, group: LedgerEntry): Promise<void> {
    this.store.processGroups.add(group);
  }

  async deleteGroup(_hostId: string, pgid: number): Promise<void> {
    this.store.processGroups.delete(pgid);
  }

  async listGroups(_hostId: string): Promise<LedgerEntry[]> {
    return this.store.processGroups.list();
  }

  // Agents' initialize answers.

  async putAgentProfile(_hostId: string, profile: AgentProfile): Promise<void> {
    this.store.agentProfiles.put(profile);
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

  /** Inside the unit's transaction: every part is stored, or none. */
  private applyUnit(unit: WriteUnit): number[] {
    const { events, sessions, questions } = this.store;
    const id = unit.lease.sessionId;
    const payloadOf = (event: WriteUnit["events"][number]) => (event.text === undefined ? event.payload : JSON.parse(event.text));
    const given = givenSeqs("events.write", unit.events);
    if (given) {
      // The host's journal numbered them: stored as given (a seq already taken fails the unit).
      events.appendSequenced(
        unit.events.map((event, i) => ({ sessionId: id, seq: given[i]!, kind: event.kind, payload: payloadOf(event), at: event.at })),
      );
    }
    const seqs = given ?? unit.events.map((event) => events.append(id, event.kind, payloadOf(event), event.at));
    if (unit.question) questions.ask({ ...unit.question, sessionId: id });
    if (unit.touchedAt !== undefined) sessions.touch(id, unit.touchedAt);
    if (unit.titleIfNone !== undefined && sessions.get(id)?.title === null) sessions.setTitle(id, unit.titleIfNone);
    return seqs;
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
