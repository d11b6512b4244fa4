import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Clock } from "../lifecycle/clock.js";
import { Listeners } from "../lifecycle/listeners.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import type { QueuedSessionChange } from "../store/sessions.js";
import type { HostStore } from "../store/host-store.js";
import type { Store } from "../store/store.js";
import { updateRow } from "../store/update-row.js";
import { callOp, type StoreCallName, type StoreCalls, type WriteOp } from "../store/write-batch.js";
import { NOTICE_META } from "../protocol/meta-keys.js";
import type { Logger } from "./logger.js";
import type { SessionBus } from "./session-bus.js";
import type { StoreHealthView } from "./store-health.js";
import { WriteQueue, type Backlog } from "./write-queue.js";

/** The kinds of durable events in a session's journal. */
export type JournalKind = "turn_started" | "update" | "turn_ended" | "question_asked" | "question_resolved" | "interrupted" | "agent_exited";

export interface AppendOptions {
  /** Stored with the event, all or nothing (a question's row with its `question_asked`). */
  readonly with?: readonly WriteOp[];
  /** Runs once the event is committed, in order with every other event and `afterCommit`; never if it was not stored. */
  readonly then?: (seq: number) => void;
  /** Runs instead of `then` if SQLite refused the event (and what was stored with it). */
  readonly refused?: (error: string) => void;
  /** The event's stored text, in place of `payload` serialised (an agent's update row, sliced from its line). */
  readonly text?: string | undefined;
}

/** The session fields the host sets (besides touches and titles), each stored through the writer. */
export interface SessionFields {
  readonly agentState?: object;
  readonly agentSessionId?: string;
  readonly agentRequest?: object;
  readonly worktree?: object;
}

/**
 * The host's one writer, and the journal it keeps. Every SQLite write of the host goes
 * through its {@link WriteQueue}, in order, committed by the writer thread
 * (`src/store/journal-writer.ts`): the event loop never runs a write statement, so it never
 * waits on the database's write lock, whoever holds it.
 *
 * - events (and the writes that belong to them, such as a question's row), session touches,
 *   titles, session fields and lifecycle records are queued; reads of a session show its queued
 *   changes at once (`SessionStore.queued`);
 * - a write the caller needs done before it goes on (a session created or deleted, a question
 *   answered) is awaited as a promise ({@link call}), bounded by `writeTimeout` where a client
 *   waits for it ({@link within}).
 *
 * **Committed before seen**: an event or a lifecycle record reaches subscribers (`then`,
 * {@link afterCommit}, the bus, the record listeners) only after its transaction committed. Sequence numbers are drawn in memory as events
 * are queued, but no one outside this class sees one before it is committed, so a number lost
 * in a crash was never seen, and numbering after a restart (the stored maximum + 1) never
 * gives a seen number twice. A unit that fails (a session deleted meanwhile) is reported and
 * not delivered; while SQLite cannot write at all (another process's lock, a full disk),
 * everything waits in order and is stored once it can.
 */
export class Journal {
  private readonly nextSeq = new Map<string, number>();
  private readonly writes: WriteQueue;
  private readonly agentStates: Listeners<string>;
  private readonly agentMessages: Listeners<string>;
  private readonly workDone: Listeners<string>;
  private readonly store: Store;

  constructor(
    /** What it reads (the numbering after a restart) and what commits its batches: the writer thread on the data directory's file (SQLite), or the fleet's writer (PostgreSQL). */
    hostStore: HostStore,
    private readonly bus: SessionBus,
    private readonly touchLocation: (key: LocationKey) => void,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly writeTimeoutMs: number,
    /** Bytes waiting to be stored past which agents' output is held (`writeBacklogLimit`). */
    backlogLimitBytes: number,
  ) {
    this.store = hostStore.reads;
    this.writes = new WriteQueue((listeners) => hostStore.writer(listeners), log, writeTimeoutMs, backlogLimitBytes);
    this.agentStates = new Listeners<string>((error) => log.error({ err: error }, "agent state listener failed"));
    this.agentMessages = new Listeners<string>((error) => log.error({ err: error }, "agent message listener failed"));
    this.workDone = new Listeners<string>((error) => log.error({ err: error }, "work done listener failed"));
  }

  /** Told the session's id once a new agent state of it (mode, model, options, commands) is committed. */
  onAgentState(listener: (sessionId: string) => void): () => void {
    return this.agentStates.add(listener);
  }

  /** Told the session's id once a piece of an agent's message (what a session's `preview` shows) is committed. */
  onAgentMessage(listener: (sessionId: string) => void): () => void {
    return this.agentMessages.add(listener);
  }

  /**
   * Told the session's id when its agent may have changed files: a tool call of it completed or failed (committed), a
   * file written through `fs/write_text_file`, a turn ended. What a session's changes are read again on (docs/review.md).
   */
  onWorkDone(listener: (sessionId: string) => void): () => void {
    return this.workDone.add(listener);
  }

  /** The session's agent may have changed files (see {@link onWorkDone}). */
  tellWorkDone(sessionId: string): void {
    this.workDone.emit(sessionId);
  }

  /**
   * Numbers and queues one event. Never throws: it runs inside agents' streams. Returns false
   * when it cannot be journaled (the session is unknown).
   */
  append(sessionId: string, key: LocationKey, kind: JournalKind, payload: unknown, options: AppendOptions = {}): boolean {
    let seq = this.nextSeq.get(sessionId);
    let text: string;
    try {
      // A session this journal has not numbered yet has no event in flight: its stored maximum is its last.
      if (seq === undefined) seq = this.store.events.lastSeq(sessionId) + 1;
      text = options.text ?? JSON.stringify(payload);
    } catch (error) {
      this.log.warn({ err: error, sessionId, kind }, "event not journaled");
      return false;
    }
    this.nextSeq.set(sessionId, seq + 1);
    const { then, refused } = options;
    this.writes.unit(
      [["e", sessionId, seq, kind, text, this.clock.now()], ...(options.with ?? [])],
      { sessionId, events: 1 },
      {
        ...(then ? { stored: () => then(seq) } : {}),
        ...(refused ? { refused } : {}),
      },
    );
    this.touchLocation(key);
    return true;
  }

  /**
   * An update from the agent, with the notification's own `_meta` if it had one; `line`: the agent's message as it came.
   * The line is sliced to its update row (`update-row.ts`): the text stored, and published with the update, so clients
   * are sent the agent's own text and nothing is serialised again. A line the slicer cannot read is serialised anew.
   */
  update(sessionId: string, key: LocationKey, update: SessionUpdate, meta?: Record<string, unknown> | null, line?: string): void {
    const row = line === undefined ? undefined : updateRow(line);
    this.journalUpdate(sessionId, key, update, meta, row === line ? undefined : row);
  }

  /**
   * An update Berth makes up for what the agent did not announce (a mode a client set): journaled like the agent's, so
   * a replay tells it; not sent live to `except`, the holder whose own request it follows.
   */
  announce(sessionId: string, key: LocationKey, update: SessionUpdate, except?: string): void {
    this.journalUpdate(sessionId, key, update, undefined, undefined, except);
  }

  private journalUpdate(
    sessionId: string,
    key: LocationKey,
    update: SessionUpdate,
    meta?: Record<string, unknown> | null,
    text?: string,
    except?: string,
  ): void {
    const notification = meta ? { sessionId, update, _meta: meta } : { sessionId, update };
    const payload = text === undefined ? (meta ? { update, _meta: meta } : { update }) : undefined;
    this.append(sessionId, key, "update", payload, {
      text,
      then: (seq) => {
        this.bus.publish(sessionId, {
          type: "update",
          seq,
          notification,
          ...(text === undefined ? {} : { text }),
          ...(except === undefined ? {} : { except }),
        });
        if (update.sessionUpdate === "agent_message_chunk") this.agentMessages.emit(sessionId);
        if (toolCallFinished(update)) this.workDone.emit(sessionId);
      },
    });
  }

  /** A notice from Berth itself in the session's transcript (interruptions, crashes), so every client sees it. */
  notice(sessionId: string, key: LocationKey, text: string, meta: Record<string, unknown>): void {
    this.update(sessionId, key, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text },
      _meta: { [NOTICE_META]: meta },
    });
  }

  /** Runs `work` after everything queued so far is committed (at once if nothing is): keeps the order of what clients see. */
  afterCommit(work: () => void): void {
    this.writes.afterCommit(work);
  }

  /**
   * Hands every write queued so far to the writer now (group commit would hold some back while batches are in flight):
   * what the caller then asks of the writer comes after them.
   */
  handQueued(): void {
    this.writes.handQueued();
  }

  /** Settles once everything queued so far is committed (or refused). */
  committed(): Promise<void> {
    return new Promise((resolve) => this.writes.afterCommit(resolve));
  }

  /** The session was active: its `updated_at` moves (never backwards). Queued. */
  touchSession(sessionId: string, at: number): void {
    this.sessionWrite(sessionId, { updatedAt: at }, [["t", sessionId, at, null, null, null]]);
  }

  /** The session's title, if it has none yet. Queued. */
  titleSession(sessionId: string, title: string): void {
    this.sessionWrite(sessionId, { title }, [["n", sessionId, title, null, null, null]]);
  }

  /** The session's title replaced (a person renamed it, or the agent named it; null clears it). Queued; reads show it at once. */
  renameSession(sessionId: string, title: string | null): void {
    this.sessionWrite(sessionId, { renamedTo: title }, [callOp("sessions.setTitle", [sessionId, title])]);
  }

  /** Sets the session's fields. Queued; reads show them at once. */
  setSession(sessionId: string, fields: SessionFields): void {
    const ops: WriteOp[] = [];
    if (fields.agentState !== undefined) ops.push(callOp("sessions.setAgentState", [sessionId, fields.agentState]));
    if (fields.agentSessionId !== undefined) ops.push(callOp("sessions.setAgentSessionId", [sessionId, fields.agentSessionId]));
    if (fields.agentRequest !== undefined) ops.push(callOp("sessions.setAgentRequest", [sessionId, fields.agentRequest]));
    if (fields.worktree !== undefined) ops.push(callOp("sessions.setWorktree", [sessionId, fields.worktree]));
    if (ops.length === 0) return;
    const told = fields.agentState === undefined ? undefined : () => this.agentStates.emit(sessionId);
    this.sessionWrite(sessionId, fields as QueuedSessionChange, ops, told);
  }

  /**
   * A lifecycle record with the id the host gave it. Queued; `then` runs once it is committed, never if it was not stored,
   * with the id the store kept if it drew its own (a fleet's shared store numbers records fleet-wide), else null.
   */
  record(id: number, kind: string, payload: unknown, at: number, then?: (storedId: number | null) => void): void {
    const stored = then && ((result: unknown) => then(typeof result === "number" ? result : null));
    this.writes.unit([["r", id, kind, JSON.stringify(payload), at, null]], NO_EVENTS, stored ? { stored } : {});
  }

  /** Queues a store method on the writer's connection; settles once it is committed (or refused). */
  call<N extends StoreCallName>(name: N, args: Parameters<StoreCalls[N]>, sessionId: string | null = null): Promise<ReturnType<StoreCalls[N]>> {
    return this.writes.call(name, args, { sessionId, events: 0 });
  }

  /** Queues a store method on the writer's connection, for no one to wait on (a refusal is logged). */
  queue<N extends StoreCallName>(name: N, args: Parameters<StoreCalls[N]>): void {
    this.writes.unit([callOp(name, args)], NO_EVENTS);
  }

  /** Waits for `write` at most `writeTimeout`; then a `StoreUnavailableError` names what was not stored, why, and `whatIfLate`. */
  within<T>(write: Promise<T>, what: string, whatIfLate: string): Promise<T> {
    return this.writes.within(write, what, whatIfLate);
  }

  /** Told when agents' output is to be held (too much waits to be stored), and when it may flow again. */
  onBacklog(listener: (backlog: Backlog) => void): () => void {
    return this.writes.onBacklog(listener);
  }

  get backlog(): Backlog {
    return this.writes.backlogState;
  }

  /** Whether the store writes, and how many writes wait. */
  health(): StoreHealthView {
    return this.writes.health();
  }

  /** The session is gone (its deletion committed): forget its sequence. */
  forget(sessionId: string): void {
    this.nextSeq.delete(sessionId);
  }

  /** Stores what is queued (waiting at most `writeTimeout` for a store that cannot write) and stops the writer thread. */
  async close(): Promise<void> {
    await this.writes.close(this.writeTimeoutMs);
  }

  /** `stored`: told once the change is committed (never if it was refused). */
  private sessionWrite(sessionId: string, change: QueuedSessionChange, ops: readonly WriteOp[], stored?: () => void): void {
    this.store.sessions.queued(sessionId, change);
    const landed = () => this.store.sessions.landed(sessionId);
    const done = stored
      ? () => {
          landed();
          stored();
        }
      : landed;
    this.writes.unit(ops, { sessionId, events: 0 }, { stored: done, refused: landed });
  }
}

const NO_EVENTS = { sessionId: null, events: 0 } as const;

/** A tool call that ended (its edits, if any, are on disk): reported finished at once, or updated to finished. */
function toolCallFinished(update: SessionUpdate): boolean {
  return (
    (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") &&
    (update.status === "completed" || update.status === "failed")
  );
}
