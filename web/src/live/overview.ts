import { api, isUnauthorized } from "../api/rest.js";
import type { AgentsList, HostRecord, LocationView, QuestionView, SessionView, StampedRecord } from "../api/types.js";
import { coalesced } from "./coalesced.js";
import { openEventStream } from "./event-stream.js";
import { Observable } from "./observable.js";
import { attemptStarted, connected, lostConnection, type Reconnection } from "./reconnection.js";

/** The page's link to the server's event stream. */
export type LinkState =
  | { readonly name: "connecting" }
  | { readonly name: "live" }
  /** What is shown is as it was `since`. */
  | { readonly name: "reconnecting"; readonly since: number }
  | { readonly name: "unauthorized" };

export interface OverviewState {
  readonly link: LinkState;
  readonly agents: AgentsList | null;
  /** Newest first. */
  readonly sessions: readonly SessionView[];
  readonly locations: readonly LocationView[];
  /** Pending only. */
  readonly questions: readonly QuestionView[];
  /** Oldest first, the most recent `RECORDS_KEPT`. */
  readonly records: readonly StampedRecord[];
  /** Sessions deleted while this page is open (a chat open on one of them closes). */
  readonly deleted: readonly string[];
}

const RECORDS_KEPT = 200;

type RecordKind = HostRecord["kind"];
const changesLocations: ReadonlySet<RecordKind> = new Set<RecordKind>([
  "location_booted",
  "location_evicted",
  "location_kept",
  "session_interrupted",
  "child_acquired",
  "child_released",
  "child_exited",
  "turn_started",
  "turn_ended",
  "question_asked",
  "question_answered",
  "question_cancelled",
]);
const changesQuestions: ReadonlySet<RecordKind> = new Set<RecordKind>([
  "question_asked",
  "question_answered",
  "question_cancelled",
  "session_interrupted",
]);

const initial: OverviewState = {
  link: { name: "connecting" },
  agents: null,
  sessions: [],
  locations: [],
  questions: [],
  records: [],
  deleted: [],
};

/**
 * Everything the overview shows, kept current by the event stream: a snapshot on (re)connect, then
 * records and session changes as they come. Locations and questions are refetched when a record says
 * they changed (never on a timer).
 */
export class LiveOverview {
  readonly state = new Observable<OverviewState>(initial);
  private readonly refetchLocations = coalesced(() => this.fetchInto("locations", api.locations));
  private readonly refetchQuestions = coalesced(() => this.fetchInto("questions", api.questions));
  private closeStream: (() => void) | undefined;
  private reopenTimer: number | undefined;
  /** The stream is reopened with the chat's backoff, not at a fixed pace: a host that is down is not asked every 2 s. */
  private reconnection: Reconnection = connected;
  private readonly agentStateListeners = new Set<(sessionId: string | null) => void>();
  /**
   * For each snapshot being read, the sessions the stream (or this page's own request) changed meanwhile: they win
   * over the snapshot, which may have been read before those changes (a ghost of a deleted session, a turn shown
   * running after it ended).
   */
  private readonly changedDuringSnapshots = new Set<Map<string, SessionView>>();
  /** How many times locations and questions were read again on a record: one read during a snapshot is newer than it. */
  private readonly refetched = { locations: 0, questions: 0 };

  /**
   * Told when a session's agent state (mode, model, options) changed, so a chat only reading it shows
   * the new one; null when the stream (re)opened: any may have changed while it was down.
   */
  onAgentState(listener: (sessionId: string | null) => void): () => void {
    this.agentStateListeners.add(listener);
    return () => this.agentStateListeners.delete(listener);
  }

  start(): () => void {
    this.open();
    return () => {
      window.clearTimeout(this.reopenTimer);
      this.closeStream?.();
    };
  }

  /** Applies a deletion made from this page at once, without waiting for the stream to echo it. */
  sessionDeleted(sessionId: string): void {
    const { sessions, questions, deleted } = this.state.value;
    if (deleted.includes(sessionId)) return;
    this.patch({
      sessions: sessions.filter((s) => s.id !== sessionId),
      questions: questions.filter((q) => q.sessionId !== sessionId),
      deleted: [...deleted, sessionId],
    });
    this.refetchLocations();
  }

  /** Applies a session view this page got from its own request (a rename) at once. */
  sessionChanged(session: SessionView): void {
    this.noteChangedDuringSnapshots(session);
    this.patch({ sessions: upsertSession(this.state.value.sessions, session) });
  }

  /** An agent was installed or removed from this page: the agents are read again (the new-session dialog lists them). */
  agentsChanged(): void {
    api.agents().then(
      (agents) => this.patch({ agents }),
      (error: unknown) => {
        if (isUnauthorized(error)) this.unauthorized();
      },
    );
  }

  questionResolved(questionId: string): void {
    this.patch({ questions: this.state.value.questions.filter((q) => q.id !== questionId) });
  }

  /** A REST call made elsewhere on the page was refused. */
  unauthorized(): void {
    this.closeStream?.();
    this.patch({ link: { name: "unauthorized" } });
  }

  private open(): void {
    this.closeStream = openEventStream({
      opened: () => {
        this.reconnection = connected;
        this.patch({ link: { name: "live" } });
        void this.resync();
        this.agentStateChanged(null);
      },
      record: (record) => this.record(record),
      session: (session) => this.sessionUpdated(session),
      sessionDeleted: (sessionId) => this.sessionDeleted(sessionId),
      agentState: (sessionId) => this.agentStateChanged(sessionId),
      closed: () => void this.streamRefused(),
    });
  }

  private noteChangedDuringSnapshots(session: SessionView): void {
    for (const changed of this.changedDuringSnapshots) changed.set(session.id, session);
  }

  private sessionUpdated(session: SessionView): void {
    this.noteChangedDuringSnapshots(session);
    const before = this.state.value.sessions.find((s) => s.id === session.id);
    this.patch({ sessions: upsertSession(this.state.value.sessions, session) });
    // A question asked or settled, however the host heard of it first: a fleet peer's record of it can reach this
    // host before the question itself, and the questions read on that record would not have it yet.
    if (before !== undefined && before.pendingQuestions !== session.pendingQuestions) this.refetchQuestions();
  }

  private agentStateChanged(sessionId: string | null): void {
    for (const listener of this.agentStateListeners) listener(sessionId);
  }

  /** The stream ended or never opened: find out whether the token was refused, else reopen it (with a new ticket). */
  private async streamRefused(): Promise<void> {
    this.closeStream?.();
    try {
      await api.agents();
    } catch (error) {
      if (isUnauthorized(error)) return this.unauthorized();
    }
    const reconnection = lostConnection(this.reconnection, "the event stream closed", Date.now());
    this.reconnection = reconnection;
    this.patch({ link: { name: "reconnecting", since: reconnection.since } });
    window.clearTimeout(this.reopenTimer);
    this.reopenTimer = window.setTimeout(() => {
      this.reconnection = attemptStarted(this.reconnection);
      this.open();
    }, reconnection.retryAt - Date.now());
  }

  private async resync(): Promise<void> {
    const changed = new Map<string, SessionView>();
    this.changedDuringSnapshots.add(changed);
    const refetchedBefore = { ...this.refetched };
    try {
      const [agents, snapshot, locations, questions, records] = await Promise.all([
        api.agents(),
        api.sessions(),
        api.locations(),
        api.questions(),
        api.records(RECORDS_KEPT),
      ]);
      const now = this.state.value;
      const sessions = [...snapshot.filter((session) => !changed.has(session.id)), ...changed.values()].filter(
        (session) => !now.deleted.includes(session.id),
      );
      this.patch({
        agents,
        sessions: newestFirst(sessions),
        locations: this.refetched.locations === refetchedBefore.locations ? locations : now.locations,
        questions: (this.refetched.questions === refetchedBefore.questions ? questions : now.questions).filter(
          (question) => !now.deleted.includes(question.sessionId),
        ),
        records: mergeRecords(records, now.records),
      });
    } catch (error) {
      if (isUnauthorized(error)) this.unauthorized();
    } finally {
      this.changedDuringSnapshots.delete(changed);
    }
  }

  private record(stamped: StampedRecord): void {
    this.patch({ records: mergeRecords(this.state.value.records, [stamped]) });
    if (changesLocations.has(stamped.record.kind)) this.refetchLocations();
    if (changesQuestions.has(stamped.record.kind)) this.refetchQuestions();
  }

  private async fetchInto<K extends "locations" | "questions">(key: K, fetch: () => Promise<OverviewState[K]>): Promise<void> {
    try {
      const read = await fetch();
      this.refetched[key]++;
      this.patch({ [key]: read });
    } catch (error) {
      if (isUnauthorized(error)) this.unauthorized();
    }
  }

  private patch(change: Partial<OverviewState>): void {
    this.state.set({ ...this.state.value, ...change });
  }
}

function upsertSession(sessions: readonly SessionView[], session: SessionView): SessionView[] {
  const others = sessions.filter((s) => s.id !== session.id);
  return newestFirst([session, ...others]);
}

/**
 * Newest created first, the snapshot and live changes alike: the list keeps still while sessions work
 * (by last activity, opening a session would move it, since its agent announces itself).
 */
function newestFirst(sessions: readonly SessionView[]): SessionView[] {
  return [...sessions].sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
}

/** Records by id, oldest first, without duplicates (a snapshot and the live stream overlap). */
function mergeRecords(a: readonly StampedRecord[], b: readonly StampedRecord[]): StampedRecord[] {
  const byId = new Map<number, StampedRecord>();
  for (const record of [...a, ...b]) byId.set(record.id, record);
  return [...byId.values()].sort((x, y) => x.id - y.id).slice(-RECORDS_KEPT);
}
