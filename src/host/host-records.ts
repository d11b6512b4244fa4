import type { Clock } from "../lifecycle/clock.js";
import type { LifecycleRecord as KernelRecord } from "../lifecycle/lifecycle-records.js";
import type { LifecycleRecord } from "../store/lifecycle-records.js";
import { recordMessages } from "../lifecycle/lifecycle-records.js";
import { Listeners } from "../lifecycle/listeners.js";
import type { Store } from "../store/store.js";
import type { Journal } from "./journal.js";
import type { Logger } from "./logger.js";

/** Records the host adds to the kernel's: children, turns, questions, reaping. */
type HostOnlyRecord =
  | { readonly kind: "child_acquired"; readonly sessionId: string; readonly agent: string; readonly pid: number; readonly ms: number }
  | {
      readonly kind: "child_released";
      readonly sessionId: string;
      readonly pid: number;
      readonly why: "grace" | "evicted" | "deleted" | "shutdown" | "unresponsive" | "lost" | "worktree_closed";
    }
  | { readonly kind: "child_exited"; readonly sessionId: string; readonly agent: string; readonly pid: number; readonly exit: string }
  | { readonly kind: "acquisition_failed"; readonly sessionId: string; readonly error: string }
  | { readonly kind: "turn_started"; readonly sessionId: string }
  | { readonly kind: "turn_ended"; readonly sessionId: string; readonly stopReason: string | null; readonly error: string | null }
  | { readonly kind: "question_asked"; readonly sessionId: string; readonly questionId: string; readonly questionKind: string }
  | { readonly kind: "question_answered"; readonly sessionId: string; readonly questionId: string }
  | { readonly kind: "question_cancelled"; readonly sessionId: string; readonly questionId: string; readonly reason: string }
  | { readonly kind: "group_reaped"; readonly pgid: number; readonly label: string; readonly outcome: string }
  | { readonly kind: "session_deleted"; readonly sessionId: string }
  /** A fleet's shared store refused this host's lease: another host (or a later process under this host's id) owns the session now. */
  | { readonly kind: "session_lost"; readonly sessionId: string; readonly owner: string | null; readonly epoch: number | null }
  /** This host took the lease of a session whose owner was offline (`from`; null if it had none) and runs it now, at `epoch`. */
  | {
      readonly kind: "session_adopted";
      readonly sessionId: string;
      readonly from: string | null;
      readonly epoch: number;
      readonly events: number;
      /** Process groups the offline owner's ledger still lists: they may still run there (the lease fences the journal, not processes). */
      readonly fromGroups: number;
    }
  /**
   * An agent's `fs/*` request put to the client whose prompt was in flight: who answered it, and why the disk did (or,
   * for a write, why nobody did: it was refused to the agent).
   */
  | {
      readonly kind: "file_request";
      readonly sessionId: string;
      readonly method: "fs/read_text_file" | "fs/write_text_file";
      readonly path: string;
      readonly by: "client" | "disk" | "none";
      readonly why?: "timeout" | "client_lacks" | "client_gone";
    }
  | {
      readonly kind: "agent_asked";
      readonly agent: string;
      readonly pid: number;
      readonly purpose: "initialize" | "authenticate" | "request";
      readonly method: string;
    };

export type HostRecord = KernelRecord | HostOnlyRecord;

const hostMessages: Readonly<Record<HostOnlyRecord["kind"], string>> = {
  child_acquired: "agent child acquired",
  child_released: "agent child released",
  child_exited: "agent child exited unexpectedly",
  acquisition_failed: "agent child acquisition failed",
  turn_started: "turn started",
  turn_ended: "turn ended",
  question_asked: "question asked",
  question_answered: "question answered",
  question_cancelled: "question cancelled",
  group_reaped: "leftover process group reaped",
  session_deleted: "session deleted",
  session_lost: "session lost to another host: its agent is stopped here",
  session_adopted: "session adopted from an offline host: this host runs it now",
  agent_asked: "agent started for one request outside any session",
  file_request: "agent's file request put to the prompting client",
};

/**
 * Fields for a record's log line only, never stored or streamed: an agent's stderr may hold what it should not keep
 * (an API's error body, a key in debug output), and records outlive their session by the retention period.
 */
export type LogOnlyFields = Readonly<Record<string, unknown>>;

/** Records of something that went wrong on its own, worth a maintainer's look: their line is a warning, the others' info. */
const warnings: ReadonlySet<HostRecord["kind"]> = new Set(["child_exited"]);

/** The one log line's text for each record. */
function messageOf(record: HostRecord): string {
  return record.kind in recordMessages ? recordMessages[record.kind as KernelRecord["kind"]] : hostMessages[record.kind as HostOnlyRecord["kind"]];
}

/** A record as it is logged, journaled and streamed: its fields, its message, its time. */
export interface StampedRecord {
  readonly id: number;
  readonly at: number;
  readonly message: string;
  readonly record: HostRecord;
}

export interface HostRecordLogDeps {
  readonly store: Store;
  readonly journal: Journal;
  readonly clock: Clock;
  readonly log: Logger;
  /** The record concerns a session: its views should be re-read. */
  readonly sessionChanged: (sessionId: string) => void;
}

/** Lifecycle records: each one a log line, a stored row and, once that row is committed, an event for the record listeners. */
export class HostRecordLog {
  private readonly listeners: Listeners<StampedRecord>;
  private nextId: number;

  constructor(private readonly deps: HostRecordLogDeps) {
    // A failing observer (an event stream, a metric) must never break the lifecycle that notifies it.
    this.listeners = new Listeners((error) => deps.log.error({ err: error }, "lifecycle record listener failed"));
    this.nextId = deps.store.lifecycleRecords.lastId() + 1;
  }

  /**
   * Logs the record at once, numbers it and queues it. Its listeners (the event stream, metrics)
   * hear of it only once it is committed, like a journal event: an id a client saw is stored,
   * so numbering after a restart (the highest id ever stored + 1) never gives it to another record.
   * An id lost in a crash was never seen by anyone; it may be drawn again.
   */
  record(record: HostRecord, logOnly?: LogOnlyFields): void {
    const at = this.deps.clock.now();
    const message = messageOf(record);
    // Numbered here and queued: recording never waits on the database.
    const id = this.nextId++;
    if (warnings.has(record.kind)) this.deps.log.warn({ ...record, ...logOnly }, message);
    else this.deps.log.info({ ...record, ...logOnly }, message);
    const stamped: StampedRecord = { id, at, message, record };
    const sessionId = "sessionId" in record ? record.sessionId : undefined;
    this.deps.journal.record(id, record.kind, record, at, (storedId) => {
      this.listeners.emit(storedId === null ? stamped : { ...stamped, id: storedId });
      // Again once committed: a session's view reads its journal's end (a turn's outcome) as committed, and what was
      // queued before the record (the turn_ended event) is committed now.
      if (sessionId !== undefined) this.deps.sessionChanged(sessionId);
    });
    if (sessionId !== undefined) this.deps.sessionChanged(sessionId);
  }

  subscribe(listener: (record: StampedRecord) => void): () => void {
    return this.listeners.add(listener);
  }

  /** The newest `limit` stored records, oldest first. */
  recent(limit: number): StampedRecord[] {
    return this.deps.store.lifecycleRecords.recent(limit).map(stampedOf);
  }
}

/** A stored record (this host's, or another's of the fleet) as it is streamed. */
export function stampedOf(row: LifecycleRecord): StampedRecord {
  const record = row.payload as unknown as HostRecord;
  return { id: row.id, at: row.at, message: messageOf(record), record };
}
