import type { LedgerEntry } from "../../processes/ledger.js";
import type { AgentProfile } from "../agent-profiles.js";
import { JournalWriter, type BatchOutcome, type BatchWriter, type WriterListeners } from "../journal-writer.js";
import type { QuestionOutcome } from "../questions.js";
import type { NewReviewComment } from "../review-comments.js";
import type { NewSession, Session } from "../sessions.js";
import { StoreNotFoundError, StoreWriteError } from "../errors.js";
import { StaleEpochError, type Lease, type SessionChanges, type StoreBackend, type UnitOutcome, type WriteUnit } from "../store-backend.js";
import { isUnreachable } from "./connection.js";
import { sessionCopy } from "./fleet-mirror.js";
import { callOp, flatten, messageOf, unitsOf, type StoreCallName, type WriteOp, type WriteValue } from "../write-batch.js";

export interface FleetWriterListeners extends WriterListeners {
  /** The session's lease is stale (another host, or a later incarnation of this one, owns it now): nothing more of it is stored here. */
  readonly lost: (sessionId: string, error: StaleEpochError) => void;
}

/** What became of one unit in the shared store: refused, or stored (with its ops as the mirror stores them). */
type Stored =
  | { readonly ok: true; readonly mirror: readonly WriteOp[]; readonly result: unknown }
  /**
   * `lost`: the session is another host's now (a stale epoch, or a lease this host dropped). `unreachable`: the server
   * could not be reached or did not answer, so the unit may or may not be stored: tried again (every try is idempotent).
   */
  | { readonly ok: false; readonly error: string; readonly lost?: boolean; readonly unreachable?: boolean };

/** Waits between tries while the shared store is unreachable: from the first, doubling up to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;

/** The session setters of the one writer, as the store interface's session changes. */
const SESSION_FIELDS: Partial<Record<StoreCallName, keyof SessionChanges>> = {
  "sessions.setTitle": "title",
  "sessions.setAgentState": "agentState",
  "sessions.setAgentSessionId": "agentSessionId",
  "sessions.setAgentRequest": "agentRequest",
  "sessions.setWorktree": "worktree",
};

/**
 * The host's one writer on a fleet's PostgreSQL store (docs/fleet.md, "The host on PostgreSQL").
 * It takes the same batches as the SQLite writer thread (`write-batch.ts`), in order, and:
 *
 * 1. stores them in the shared store through {@link StoreBackend}, each session's units under
 *    this host's lease (runs of journal units are one `write`: one transaction);
 * 2. then applies what was stored to this host's **mirror**, a SQLite file in its data directory
 *    that the host reads synchronously (with the seqs and record ids the shared store drew);
 * 3. then reports the batch committed. Committed before seen holds for both: nothing is reported
 *    before the shared store committed it and the mirror shows it.
 *
 * A unit refused by the shared store (a stale epoch, a session this host does not own, a question
 * already resolved elsewhere) is reported failed and never reaches the mirror. A stale epoch
 * also drops the lease and tells `lost`. A unit the server could not be reached for is tried
 * again, after a pause growing to 2 s, until it is stored or refused or the host stops; the
 * batches behind it wait, in order (docs/fleet.md, "What happens when PostgreSQL is unreachable").
 */
export class FleetWriter implements BatchWriter {
  private posted = 0;
  private delivered = 0;
  private chain: Promise<void> = Promise.resolve();
  private state: "running" | "closing" | "stopped" = "running";
  private readonly leases = new Map<string, Lease>();
  /** Sessions whose creation the shared store may have committed before their lease is in `leases`. */
  private readonly creating = new Set<string>();
  /** Sessions whose creation the shared store refused: their later writes fail as not stored, not as another host's. */
  private readonly uncreated = new Set<string>();
  private readonly mirror: JournalWriter;
  /** Mirror batches handed over and not reported yet, by the mirror writer's number. */
  private readonly mirrored = new Map<number, (outcome: BatchOutcome) => void>();
  /** What keeps writes from being stored: the shared store (unreachable), the mirror (SQLite cannot write), or both; since `blockedSince`. */
  private readonly blocked = new Set<"shared store" | "mirror">();
  private blockedSince = 0;
  /** Ends the pause before the next try at once (the host stops). */
  private wake: (() => void) | undefined;

  constructor(
    private readonly backend: StoreBackend,
    private readonly hostId: string,
    mirrorPath: string,
    leases: readonly Lease[],
    private readonly listeners: FleetWriterListeners,
  ) {
    for (const lease of leases) this.leases.set(lease.sessionId, lease);
    this.mirror = new JournalWriter(mirrorPath, {
      committed: (outcome) => {
        this.mirrored.get(outcome.batch)?.(outcome);
        this.mirrored.delete(outcome.batch);
      },
      // The mirror's own health is the host's too: while it cannot write, nothing is reported stored.
      status: (status) =>
        status.state === "blocked" ? this.block("mirror", status.since, status.code, `the mirror: ${status.error}`) : this.unblock("mirror"),
      ...(listeners.threadLost ? { threadLost: listeners.threadLost } : {}),
    });
  }

  write(values: WriteValue[]): number {
    if (this.state !== "running") throw new Error("the fleet writer is stopped");
    const batch = ++this.posted;
    this.chain = this.chain.then(() => this.apply(batch, values));
    return batch;
  }

  get last(): number {
    return this.posted;
  }

  /** The leases this host writes under, by session. */
  heldLeases(): Lease[] {
    return [...this.leases.values()];
  }

  /** Whether this host writes the session: it holds its lease, or is creating it (the lease may be stored and not held yet). */
  writes(sessionId: string): boolean {
    return this.leases.has(sessionId) || this.creating.has(sessionId);
  }

  /** The lease is gone (the caller learned it elsewhere, e.g. a heartbeat's check): later units of the session are refused here. */
  forget(sessionId: string): void {
    this.leases.delete(sessionId);
  }

  /** Deletes a session this host no longer owns from the mirror (its reads), after what is queued. */
  deleteFromMirror(sessionId: string): Promise<void> {
    return new Promise((resolve) => {
      this.chain = this.chain.then(async () => {
        await this.toMirror([[callOp("sessions.delete", [sessionId])]]);
        resolve();
      });
    });
  }

  /**
   * A session this host adopted (it took the lease an offline host held): copied from the shared store into the mirror
   * whole, in order with what is queued (the host's other writes wait for the copy), then written under `lease`. If the
   * copy fails, nothing of it stays in the mirror and the lease is not used.
   */
  adopt(lease: Lease, session: Session): Promise<void> {
    const copied = this.chain.then(async () => {
      if (this.state !== "running") throw new Error("the fleet writer is stopped");
      const stored = async (run: readonly (readonly WriteOp[])[]) => {
        const { failed } = await this.toMirror(run);
        if (failed.length > 0) throw new Error(`the mirror could not store the adopted session: ${failed[0]!.error}`);
      };
      try {
        // A copy left from an earlier ownership by this host (lost since) is replaced whole.
        await stored([[callOp("sessions.delete", [session.id])]]);
        for await (const run of sessionCopy(this.backend, session)) await stored(run);
      } catch (error) {
        await this.toMirror([[callOp("sessions.delete", [session.id])]]);
        throw error;
      }
      this.leases.set(lease.sessionId, lease);
    });
    this.chain = copied.catch(() => undefined);
    return copied;
  }

  async close(timeoutMs: number): Promise<number> {
    if (this.state !== "running") return 0;
    this.state = "closing";
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.chain, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    // Batches still waiting on the shared store are reported failed by `apply` from now on, the one being tried too.
    const unstored = this.posted - this.delivered;
    this.state = "stopped";
    this.wake?.();
    const lost = await this.mirror.close(Math.max(0, timeoutMs - (Date.now() - started)));
    for (const report of this.mirrored.values()) report({ batch: 0, failed: [{ unit: -1, error: "not stored in the mirror: the host stopped" }] });
    return lost + unstored;
  }

  private async apply(batch: number, values: WriteValue[]): Promise<void> {
    const units = unitsOf(values);
    if (this.state === "stopped") {
      this.report(batch, { batch, failed: [{ unit: -1, error: "not stored: the host stopped while the shared store did not answer" }] });
      return;
    }
    const stored = await this.store(units);
    const accepted = stored.flatMap((outcome, unit) => (outcome.ok ? [unit] : []));
    const mirrorOutcome = await this.toMirror(accepted.map((unit) => (stored[unit] as { mirror: readonly WriteOp[] }).mirror));
    const failed = stored.flatMap((outcome, unit) => (outcome.ok ? [] : [{ unit, error: outcome.error, ...(outcome.lost ? { lost: true } : {}) }]));
    // Stored in the shared store (the truth) but not in the mirror: reported stored; the mirror is rebuilt at the next start.
    for (const failure of mirrorOutcome.failed) {
      const units = failure.unit === -1 ? accepted : [accepted[failure.unit]!];
      this.listeners.threadLost?.(`the mirror could not store ${units.length} unit(s) the shared store committed: ${failure.error}`);
    }
    this.report(batch, { batch, failed, results: stored.map((outcome) => (outcome.ok ? outcome.result : null)) });
  }

  private report(batch: number, outcome: BatchOutcome): void {
    this.delivered = batch;
    this.listeners.committed(outcome);
  }

  private toMirror(units: readonly (readonly WriteOp[])[]): Promise<BatchOutcome> {
    if (units.length === 0 || this.state === "stopped") return Promise.resolve({ batch: 0, failed: [] });
    return new Promise((resolve) => this.mirrored.set(this.mirror.write(flatten(units)), resolve));
  }

  /** Stores the units in order: runs of journal units as one `write`, every other unit as its own call; each tried until reached. */
  private async store(units: readonly WriteOp[][]): Promise<Stored[]> {
    const outcomes: Stored[] = [];
    for (let at = 0; at < units.length; ) {
      let end = at;
      while (end < units.length && isJournalUnit(units[end]!)) end++;
      if (end > at) {
        outcomes.push(...(await this.untilReached(() => this.journalRun(units.slice(at, end)))));
        at = end;
      } else {
        const unit = units[at]!;
        const [outcome] = await this.untilReached(async (retry) => [await this.settle(() => this.other(unit, retry))]);
        outcomes.push(outcome!);
        at++;
      }
    }
    return outcomes;
  }

  /**
   * Tries `work` (a run of units, all stored or none: one transaction or one call) until no unit of it failed for want
   * of the server, pausing between tries; the host stopping ends the tries (what was not reached is reported failed).
   * `retry`: a try after one that may have committed without its reply arriving.
   */
  private async untilReached(work: (retry: boolean) => Promise<Stored[]>): Promise<Stored[]> {
    let outcomes = await work(false);
    for (let pause = RETRY_FIRST_MS; outcomes.some((outcome) => !outcome.ok && outcome.unreachable); pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      if (this.stopped()) return outcomes;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      if (this.stopped()) return outcomes;
      outcomes = await work(true);
    }
    return outcomes;
  }

  /** A method, not a field read: `close` stops the writer while a try waits. */
  private stopped(): boolean {
    return this.state === "stopped";
  }

  /** Events (with a question asked), touches and titles of sessions: one transaction for the run (idempotent: written again as it was). */
  private async journalRun(units: readonly WriteOp[][]): Promise<Stored[]> {
    const outcomes: Array<Stored | undefined> = [];
    const writes: WriteUnit[] = [];
    const positions: number[] = [];
    units.forEach((ops, index) => {
      const sessionId = String(ops[0]![0] === "q" ? ops[0]![2] : ops[0]![1]);
      const lease = this.leases.get(sessionId);
      if (!lease) {
        outcomes[index] = this.refused(this.noLease(sessionId));
        return;
      }
      writes.push(journalUnit(lease, ops));
      positions.push(index);
    });
    let results: UnitOutcome[];
    try {
      results = writes.length === 0 ? [] : await this.backend.write(writes);
    } catch (error) {
      results = writes.map(() => ({ ok: false as const, error: error as Error }));
    }
    // The server answered only if something was stored: a batch refused whole may be the connection failing unit by unit.
    if (results.some((result) => result.ok)) this.writable();
    results.forEach((result, i) => {
      const index = positions[i]!;
      if (!result.ok) {
        outcomes[index] = this.refused(result.error);
        return;
      }
      // Stored at the journal's seqs: the mirror takes the unit as it is.
      outcomes[index] = { ok: true, mirror: units[index]!, result: null };
    });
    return outcomes as Stored[];
  }

  /**
   * A unit of another kind: a question resolved (with its event), a session's fields, a record, a rarer call. `retry`:
   * an earlier try may have been stored (its reply lost), so what it stored is not refused as someone else's.
   */
  private async other(ops: readonly WriteOp[], retry: boolean): Promise<Stored> {
    const [first] = ops;
    if (first?.[0] === "r") {
      const id = await this.backend.appendRecord(this.hostId, String(first[2]), JSON.parse(String(first[3])), Number(first[4]));
      return { ok: true, mirror: [["r", id, first[2], first[3], first[4], null]], result: id };
    }
    if (first?.[0] === "e" && ops[1]?.[1] === "questions.resolve") return this.resolution(first, ops[1], retry);
    if (!ops.every((op) => op[0] === "c")) return { ok: false, error: `unsupported unit (${ops.map((op) => op[0]).join(", ")})` };
    const calls = ops.map((op) => ({ name: op[1] as StoreCallName, args: JSON.parse(String(op[2])) as unknown[] }));
    if (calls.every((call) => SESSION_FIELDS[call.name])) {
      const sessionId = String(calls[0]!.args[0]);
      const changes = Object.fromEntries(calls.map((call) => [SESSION_FIELDS[call.name]!, call.args[1]]));
      await this.backend.updateSession(this.lease(sessionId), changes);
      return { ok: true, mirror: ops, result: null };
    }
    if (calls.length !== 1) return { ok: false, error: `unsupported unit (${calls.map((call) => call.name).join(", ")})` };
    return { ok: true, mirror: ops, result: await this.call(calls[0]!.name, calls[0]!.args, retry) };
  }

  private async call(name: StoreCallName, args: unknown[], retry: boolean): Promise<unknown> {
    switch (name) {
      case "sessions.create": {
        const asked = args[0] as NewSession;
        const id = String(asked.id);
        this.creating.add(id);
        // Until the creation is stored or refused: between tries the store may hold it, with this host's lease (a heartbeat
        // must not take it for a session this host does not run).
        let settled = true;
        try {
          const lease = await this.backend.createSession(asked, this.hostId).catch(async (error: unknown) => {
            // The id taken, after a try whose reply was lost: by that try if the session is the one asked for, still this host's at epoch 1.
            const created = retry && error instanceof StoreWriteError && error.code === "23505" && (await this.createdAsTried(asked));
            if (!created) throw error;
            return created;
          });
          this.leases.set(lease.sessionId, lease);
          this.uncreated.delete(id);
        } catch (error) {
          settled = !isUnreachable(error) || this.stopped();
          if (settled) this.uncreated.add(id);
          throw error;
        } finally {
          if (settled) this.creating.delete(id);
        }
        return null;
      }
      case "sessions.delete": {
        const id = String(args[0]);
        try {
          await this.backend.deleteSession(this.lease(id));
        } catch (error) {
          // Gone already, after a try whose reply was lost: that try deleted it.
          if (!(retry && error instanceof StoreNotFoundError)) throw error;
        }
        this.leases.delete(id);
        return true;
      }
      case "processGroups.add":
        return this.backend.addGroup(this.hostId, args[0] as LedgerEntry).then(() => null);
      case "processGroups.delete":
        return this.backend.deleteGroup(this.hostId, Number(args[0])).then(() => null);
      case "agentProfiles.put":
        return this.backend.putAgentProfile(this.hostId, args[0] as AgentProfile).then(() => null);
      case "lifecycleRecords.pruneBefore":
        return this.backend.pruneRecordsBefore(this.hostId, Number(args[0]));
      case "reviewComments.add":
        return this.backend.addReviewComment(args[0] as NewReviewComment).then(() => null);
      case "reviewComments.edit":
        return this.backend.editReviewComment(String(args[0]), String(args[1]));
      case "reviewComments.delete":
        return this.backend.deleteReviewComment(String(args[0]));
      case "reviewComments.markSent":
        return this.backend.markReviewCommentsSent(args[0] as string[], Number(args[1]));
      default:
        throw new Error(`unsupported store call ${name}`);
    }
  }

  /**
   * A question resolved and its `question_resolved` event (at the journal's seq): one statement in the shared store, the
   * first resolution fleet-wide wins. Under this host's lease whatever the resolution: a host that lost the session
   * relays nothing of it, a person's answer included.
   */
  private async resolution(event: WriteOp, resolve: WriteOp, retry: boolean): Promise<Stored> {
    const [questionId, state, answerOrReason, at] = JSON.parse(String(resolve[2])) as [string, QuestionOutcome, unknown, number];
    const sessionId = String(event[1]);
    const seq = Number(event[2]);
    const lease = this.lease(sessionId);
    const outcome =
      state === "answered"
        ? await this.backend.resolveQuestion({ questionId, state, answer: answerOrReason as never, at, seq }, lease)
        : await this.backend.resolveQuestion({ questionId, state, reason: String(answerOrReason), at, seq }, lease);
    if (!outcome.won && !(retry && (await this.resolvedAsTried(questionId, state, answerOrReason, at, sessionId, seq)))) {
      return { ok: false, error: `question "${questionId}" was already resolved` };
    }
    // As the shared store journaled it: at the resolution's time.
    return { ok: true, mirror: [["e", sessionId, seq, event[3], event[4], at], resolve], result: null };
  }

  /** The lease of the session as `asked` created it with this host at its first epoch, if that is what the store holds. */
  private async createdAsTried(asked: NewSession): Promise<Lease | undefined> {
    const [session, lease] = await Promise.all([this.backend.getSession(asked.id), this.backend.getLease(asked.id)]);
    const same =
      session?.agent === asked.agent &&
      session.cwd === asked.cwd &&
      session.workspace === (asked.workspace ?? null) &&
      session.createdAt === asked.createdAt &&
      lease?.hostId === this.hostId &&
      lease.epoch === 1;
    return same ? lease : undefined;
  }

  /**
   * Whether the question is resolved as this host tried to resolve it (same outcome, same time, its event at `seq`): a
   * try whose commit reached the server and whose reply was lost won, so the retry's "already resolved" is its own.
   */
  private async resolvedAsTried(
    questionId: string,
    state: QuestionOutcome,
    detail: unknown,
    at: number,
    sessionId: string,
    seq: number,
  ): Promise<boolean> {
    const question = await this.backend.getQuestion(questionId);
    if (!question || question.state !== state || question.resolvedAt !== at) return false;
    const tried = state === "answered" ? JSON.stringify(question.answer) === JSON.stringify(detail) : question.reason === detail;
    if (!tried) return false;
    const [stored] = await this.backend.readEvents(sessionId, { after: seq - 1, limit: 1 });
    return stored?.seq === seq && stored.kind === "question_resolved";
  }

  private lease(sessionId: string): Lease {
    const lease = this.leases.get(sessionId);
    if (lease) return lease;
    throw this.noLease(sessionId);
  }

  /** Why a session's unit has no lease to go under: its creation failed, or it is not this host's (another's now: `lost`). */
  private noLease(sessionId: string): Error {
    if (this.uncreated.has(sessionId)) return new Error(`session "${sessionId}" was not stored: its creation failed in the shared store`);
    return new NotOwnedError(this.notOwned(sessionId));
  }

  private notOwned(sessionId: string): string {
    return `session "${sessionId}" is not owned by this host ("${this.hostId}")`;
  }

  private async settle(work: () => Promise<Stored>): Promise<Stored> {
    try {
      const stored = await work();
      this.writable();
      return stored;
    } catch (error) {
      return this.refused(error);
    }
  }

  /** A refusal; a stale epoch also drops the lease and tells the host. A failure to reach the server reports the store blocked. */
  private refused(error: unknown): Stored {
    if (error instanceof StaleEpochError) {
      if (this.leases.delete(error.sessionId)) this.listeners.lost(error.sessionId, error);
      return { ok: false, error: messageOf(error), lost: true };
    }
    if (error instanceof NotOwnedError) return { ok: false, error: error.message, lost: true };
    if (!isUnreachable(error)) return { ok: false, error: messageOf(error) };
    // No address in the reason: `/healthz` answers anyone on the machine.
    this.block("shared store", Date.now(), codeOf(error), "the shared store (PostgreSQL) cannot be reached; writes are tried again until it can");
    return { ok: false, error: messageOf(error), unreachable: true };
  }

  private writable(): void {
    this.unblock("shared store");
  }

  /** One `blocked` status when the first thing blocks; one `writable` when the last one clears. */
  private block(what: "shared store" | "mirror", since: number, code: string, error: string): void {
    if (this.blocked.has(what)) return;
    const first = this.blocked.size === 0;
    this.blocked.add(what);
    if (!first) return;
    this.blockedSince = since;
    this.listeners.status?.({ state: "blocked", since, code, error });
  }

  private unblock(what: "shared store" | "mirror"): void {
    if (!this.blocked.delete(what) || this.blocked.size > 0) return;
    this.listeners.status?.({ state: "writable", since: this.blockedSince, at: Date.now() });
  }
}

/** A write for a session this host holds no lease on (never had, lost, or deleted). */
class NotOwnedError extends Error {
  override readonly name = "NotOwnedError";
}

/** Events (a question asked with one), a touch, a title: what `StoreBackend.write` stores under a lease. */
function isJournalUnit(ops: readonly WriteOp[]): boolean {
  return ops.length > 0 && ops.every((op) => op[0] === "e" || op[0] === "q" || op[0] === "t" || op[0] === "n");
}

function journalUnit(lease: Lease, ops: readonly WriteOp[]): WriteUnit {
  // At the seqs the journal gave them (and published): the shared store keeps those.
  const events = ops.filter((op) => op[0] === "e").map((op) => ({ seq: Number(op[2]), kind: String(op[3]), text: String(op[4]), at: Number(op[5]) }));
  const asked = ops.find((op) => op[0] === "q");
  const touched = ops.filter((op) => op[0] === "t").map((op) => Number(op[2]));
  const title = ops.find((op) => op[0] === "n");
  return {
    lease,
    events,
    ...(asked
      ? {
          question: {
            id: String(asked[1]),
            kind: asked[3] as "permission" | "elicitation",
            request: JSON.parse(String(asked[4])),
            askedAt: Number(asked[5]),
          },
        }
      : {}),
    ...(touched.length > 0 ? { touchedAt: Math.max(...touched) } : {}),
    ...(title ? { titleIfNone: String(title[2]) } : {}),
  };
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "UNKNOWN";
}
