import type { AgentChild } from "../agents/agent-child.js";
import type { Executions } from "../lifecycle/executions.js";
import { locationKey } from "../lifecycle/location-key.js";
import type { LocationRetention } from "../lifecycle/location-retention.js";
import type { LocationServicesCache } from "../lifecycle/location-services-cache.js";
import type { SessionChildState, SessionHolds } from "../lifecycle/session-holds.js";
import type { LocationServices } from "../location/location-services.js";
import type { TerminalOutputResult } from "../location/terminal.js";
import { newestFirst, type Session, type SessionPageQuery } from "../store/sessions.js";
import type { JournalEnd } from "../store/journal-ends.js";
import type { Store } from "../store/store.js";
import { clientHolders } from "./holders.js";
import type { AgentRegistry } from "../agents/agent-registry.js";
import type { Sandboxes } from "../sandbox/sandboxes.js";
import { sandboxViewOf } from "./session-sandbox.js";
import type { PeerSession, Peers } from "./fleet-directory.js";
import type { Journal } from "./journal.js";
import type { PeerLiveViews } from "./peer-live-views.js";
import { locationOfSession, sessionsAt } from "./session-location.js";
import type { Worktree } from "../worktrees/worktree.js";
import type { FleetCounts, HostView, LiveSessionState, LocationView, SessionPage, SessionView } from "./views.js";

export interface HostViewsDeps {
  readonly store: Store;
  /** Sessions this host lost to another host of its fleet: hidden at once, before they are deleted from its mirror. */
  readonly lost: ReadonlySet<string>;
  /** This host's id in its fleet; null on SQLite (one host). */
  readonly hostId: string | null;
  /** The fleet's other hosts' sessions, shown beside this host's own. */
  readonly peers: Peers;
  /** What the peers stream of their own sessions' live states (empty without a cluster secret, and on SQLite). */
  readonly live: PeerLiveViews;
  readonly journal: Journal;
  readonly holds: SessionHolds<AgentChild>;
  readonly executions: Executions;
  readonly retention: LocationRetention<LocationServices>;
  readonly cache: LocationServicesCache<LocationServices>;
  readonly sandboxes: Sandboxes;
  readonly registry: AgentRegistry;
}

/** Sessions, locations and terminal output as operators and clients see them: read from the store and the kernel, never booting anything. */
export class HostViews {
  constructor(private readonly deps: HostViewsDeps) {}

  /** This host's session, else another host's of the fleet. */
  session(sessionId: string): SessionView | undefined {
    const own = this.ownSession(sessionId);
    if (own) return own;
    const peer = this.deps.peers.session(sessionId);
    return peer && this.peerView(peer);
  }

  /** Whether {@link session} would find it, without building its view (a request's check that it exists). */
  exists(sessionId: string): boolean {
    return (!this.deps.lost.has(sessionId) && this.deps.store.sessions.has(sessionId)) || this.deps.peers.session(sessionId) !== undefined;
  }

  /** This host's own session (never another host's). */
  ownSession(sessionId: string): SessionView | undefined {
    const session = this.deps.lost.has(sessionId) ? undefined : this.deps.store.sessions.get(sessionId);
    return session && this.viewsOf([session])[0];
  }

  /** This host's own sessions (of one directory, if given), most recently updated first. */
  ownSessions(cwd?: string): SessionView[] {
    const { store, lost } = this.deps;
    return this.viewsOf(store.sessions.list(cwd === undefined ? {} : { cwd }).filter((session) => !lost.has(session.id)));
  }

  /** Every host's sessions, most recently updated first. */
  sessions(filter: { cwd?: string }): SessionView[] {
    const cwd = filter.cwd === undefined ? undefined : locationKey(filter.cwd).directory;
    const own = this.ownSessions(cwd);
    const others = this.deps.peers.sessions().filter((peer) => cwd === undefined || peer.session.cwd === cwd);
    if (others.length === 0) return own;
    return own.concat(others.map((peer) => this.peerView(peer))).sort((a, b) => b.updatedAt - a.updatedAt);
  }

  /**
   * A page of every host's sessions (of `cwd` and `agent`, if given), newest first (by last activity, creation, id): this host's read
   * by keyset from its store, the fleet's others' from memory; only the page's sessions are made into views.
   */
  page(query: SessionPageQuery): SessionPage {
    const { store, lost, peers } = this.deps;
    const { agent, after, limit } = query;
    const cwd = query.cwd === undefined ? undefined : locationKey(query.cwd).directory;
    // One past the page tells whether there is more; a lost session read is not shown, so read that many more.
    const own = store.sessions
      .page({
        ...(cwd === undefined ? {} : { cwd }),
        ...(agent === undefined ? {} : { agent }),
        ...(after ? { after } : {}),
        limit: limit + 1 + lost.size,
      })
      .filter((session) => !lost.has(session.id))
      .map((session) => ({ session, peer: undefined as PeerSession | undefined }));
    const others = peers
      .sessions()
      .filter(({ session }) => (cwd === undefined || session.cwd === cwd) && (agent === undefined || session.agent === agent))
      .filter(({ session }) => after === undefined || newestFirst(after, session) < 0)
      .map((peer) => ({ session: peer.session, peer }));
    const listed = (others.length === 0 ? own : own.concat(others).sort((a, b) => newestFirst(a.session, b.session))).slice(0, limit + 1);
    const shown = listed.slice(0, limit);
    const last = shown.at(-1)?.session;
    const ownViews = new Map(this.viewsOf(shown.flatMap(({ session, peer }) => (peer ? [] : [session]))).map((view) => [view.id, view]));
    return {
      sessions: shown.map(({ session, peer }) => (peer ? this.peerView(peer) : ownViews.get(session.id)!)),
      ...(listed.length > limit && last ? { next: { updatedAt: last.updatedAt, createdAt: last.createdAt, id: last.id } } : {}),
    };
  }

  /** Every session's agent-child state and pid, for gauges: one query, nothing read per session. */
  sessionStates(): { readonly state: SessionChildState; readonly pid: number | null }[] {
    const { store, holds } = this.deps;
    return store.sessions.list({}).map((session) => ({ state: holds.state(session.id), pid: holds.child(session.id)?.pid ?? null }));
  }

  /**
   * The fleet's sessions and pending questions by owner host: this host's from its mirror (one query each), the others'
   * from the fleet directory in memory; undefined on SQLite (no fleet). Nothing is read per session.
   */
  fleetCounts(hosts: readonly HostView[] | undefined): FleetCounts | undefined {
    const { store, lost, hostId, peers } = this.deps;
    if (!hosts || hostId === null) return undefined;
    const sessions = new Map<string, { host: string | null; online: boolean; count: number }>();
    const questions = new Map<string | null, number>(hosts.map((host) => [host.id, 0]));
    const count = (host: string | null, online: boolean, pending: number) => {
      const key = `${host ?? ""}\u0000${online}`;
      const entry = sessions.get(key) ?? { host, online, count: 0 };
      sessions.set(key, { ...entry, count: entry.count + 1 });
      questions.set(host, (questions.get(host) ?? 0) + pending);
    };
    const pendingOf = new Map<string, number>();
    for (const question of store.questions.listPending()) pendingOf.set(question.sessionId, (pendingOf.get(question.sessionId) ?? 0) + 1);
    // As the fleet sees this host (its heartbeat on the database's clock), like every other host's: one series per host.
    const selfOnline = hosts.find((host) => host.id === hostId)?.online ?? true;
    for (const session of store.sessions.list({})) if (!lost.has(session.id)) count(hostId, selfOnline, pendingOf.get(session.id) ?? 0);
    for (const peer of peers.sessions()) count(peer.owner?.id ?? null, peer.ownerOnline, peer.pendingQuestions.length);
    return { hosts, sessions: [...sessions.values()], questions: [...questions].map(([host, pending]) => ({ host, count: pending })) };
  }

  /** Cached locations only: listing never boots one. */
  locations(): LocationView[] {
    const { store, retention, cache } = this.deps;
    return retention.list().map((status) => {
      const located = cache.peek(status.key);
      const sessions = sessionsAt(store, status.key);
      return {
        host: this.deps.hostId,
        directory: status.key.directory,
        workspace: status.key.workspace ?? null,
        state: status.state,
        activeAt: status.activeAt,
        expiresAt: status.expiresAt,
        capAt: status.capAt,
        keptBy: status.activeSessions.length > 0 ? "active-execution" : "idle-ttl",
        sessions: sessions.map((session) => session.id),
        activeSessions: status.activeSessions.map((execution) => execution.sessionId),
        services: located?.services.list().map(({ name, state, pid, port }) => ({ name, state, pid: pid ?? null, port: port ?? null })) ?? [],
        terminals: located?.terminals.ids().length ?? 0,
        pendingQuestions: located?.questions.list().length ?? 0,
      };
    });
  }

  /** A terminal of this session: its output as the agent would read it; undefined if its location is not loaded, it is gone or another session's. Never boots. */
  terminalOutput(sessionId: string, terminalId: string): TerminalOutputResult | undefined {
    const key = locationOfSession(this.deps.store, sessionId);
    const located = key && this.deps.retention.peek(key);
    try {
      return located?.terminals.output(terminalId, sessionId);
    } catch {
      return undefined;
    }
  }

  /** Another host's session: its owner's live state while that owner is online and streams one, else the store's alone. */
  private peerView(peer: PeerSession): SessionView {
    const live = peer.owner && peer.ownerOnline ? this.deps.live.state(peer.owner.id, peer.session.id) : undefined;
    return { ...peerView(peer, live), sandbox: sandboxViewOf(this.deps.sandboxes, this.deps.registry, peer.session) };
  }

  /** This host's sessions as views: what each shows of its journal and questions read for all of them at once. */
  private viewsOf(sessions: readonly Session[]): SessionView[] {
    const ends = this.deps.store.journalEnds.of(sessions);
    return sessions.map((session) => this.viewOf(session, ends.get(session.id)!));
  }

  private viewOf(session: Session, end: JournalEnd): SessionView {
    const { holds, executions } = this.deps;
    const execution = executions.get(session.id);
    const child = holds.child(session.id);
    return {
      id: session.id,
      host: this.deps.hostId,
      hostOnline: true,
      agent: session.agent,
      cwd: session.cwd,
      workspace: session.workspace,
      worktree: session.worktree as Worktree | null,
      title: session.title,
      state: holds.state(session.id),
      pid: child?.pid ?? null,
      holders: clientHolders(holds, session.id),
      turnActive: execution !== undefined,
      turnStartedAt: execution?.startedAt ?? null,
      pendingQuestions: end.pendingQuestions,
      releaseAt: holds.releaseAt(session.id) ?? null,
      preview: end.preview,
      sandbox: sandboxViewOf(this.deps.sandboxes, this.deps.registry, session),
      lastTurn: execution === undefined ? end.lastTurn : null,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
    };
  }
}

/** What the shared store cannot know of another host's session: childless here, until its owner streams its state. */
const STORE_ONLY: Omit<LiveSessionState, "id"> = {
  state: "childless",
  pid: null,
  holders: 0,
  turnActive: false,
  turnStartedAt: null,
  releaseAt: null,
  preview: null,
  lastTurn: null,
};

/**
 * Another host's session: what the shared store says of it (owner, title, questions, times), and what its owner
 * streamed of its agent, holders and turn (`live`), if anything.
 */
function peerView({ session, owner, ownerOnline, pendingQuestions }: PeerSession, live: LiveSessionState | undefined): Omit<SessionView, "sandbox"> {
  const { state, pid, holders, turnActive, turnStartedAt, releaseAt, preview, lastTurn } = live ?? STORE_ONLY;
  return {
    id: session.id,
    host: owner?.id ?? null,
    hostOnline: ownerOnline,
    agent: session.agent,
    cwd: session.cwd,
    workspace: session.workspace,
    worktree: session.worktree as Worktree | null,
    title: session.title,
    state,
    pid,
    holders,
    turnActive,
    turnStartedAt,
    pendingQuestions: pendingQuestions.length,
    releaseAt,
    preview,
    lastTurn,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
  };
}
