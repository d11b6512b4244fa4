import { randomUUID } from "node:crypto";
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { AuthenticateRequest, ContentBlock, InitializeResponse, PromptRequest, PromptResponse } from "@agentclientprotocol/sdk";
import type { AgentChild } from "../agents/agent-child.js";
import { AgentRegistry } from "../agents/agent-registry.js";
import type { Config } from "../config/config-schema.js";
import { formatDuration } from "../config/durations.js";
import { dataPaths } from "../config/paths.js";
import { systemClock, type Clock } from "../lifecycle/clock.js";
import { ConnectionCleanups } from "../lifecycle/connection-cleanups.js";
import { Executions } from "../lifecycle/executions.js";
import { Listeners } from "../lifecycle/listeners.js";
import { InvalidLocationError, locationKey, type LocationKey } from "../lifecycle/location-key.js";
import { LocationRetention } from "../lifecycle/location-retention.js";
import { LocationServicesCache, type CloseReason } from "../lifecycle/location-services-cache.js";
import { SessionHolds, type HoldTicket, type SessionChildState } from "../lifecycle/session-holds.js";
import { bootLocationServices, closeLocationServices, type LocationServices } from "../location/location-services.js";
import type { QuestionAnswer } from "../location/question-types.js";
import type { TerminalOutputResult } from "../location/terminal.js";
import type { JournalEvent } from "../store/events.js";
import type { Json } from "../store/index.js";
import type { Session } from "../store/sessions.js";
import type { ProcessGroupLedger } from "../processes/index.js";
import { Store } from "../store/store.js";
import { AgentChildren, SessionNotFoundError } from "./agent-children.js";
import { AgentLogins } from "./agent-logins.js";
import { AgentsOutsideSessions, type Asker } from "./agents-outside-sessions.js";
import { AgentProfiles } from "./agent-profiles.js";
import { Housekeeping } from "./housekeeping.js";
import { agentRequestOf, type AgentRequest, type ReopenRequest } from "./agent-request.js";
import { answerFields, stateOf, withRequest, type AgentSessionState } from "./agent-session-state.js";
import { RelayedRequest } from "./relayed-request.js";
import { TransientChildren } from "./transient-child.js";
import { messageOf, type HostRecord, type StampedRecord } from "./host-records.js";
import { Journal } from "./journal.js";
import { silentLogger, type Logger } from "./logger.js";
import { QuestionDesk } from "./question-desk.js";
import { SessionBus, type SessionListener } from "./session-bus.js";
import { normalTitle, titleUpdate } from "./session-titles.js";
import { restoreAfterRestart } from "./startup.js";

export { sweepLeftovers } from "./startup.js";
import { locationOf } from "./session-location.js";
import { Turns } from "./turns.js";
import type { StoreHealthView } from "./store-health.js";
import type { LocationView, QuestionView, SessionView } from "./views.js";

/** The host is stopping or stopped: it admits no new work. */
export class HostStoppedError extends Error {
  override readonly name = "HostStoppedError";
  constructor() {
    super("the host is shutting down");
  }
}

export interface HostOptions {
  readonly config: Config;
  /** Where the journal, terminal output and agent state live (the caller resolves `config.dataDir` and flags). */
  readonly dataDir: string;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export interface NewSessionParams {
  readonly cwd: string;
  readonly agent?: string;
  readonly workspace?: string | null;
  /** What the creating client asked of the agent, passed on to every child of the session. */
  readonly agentRequest?: AgentRequest;
}

/** The holder that keeps a child that cannot be reloaded for as long as its location is retained. */
const LOCATION_HOLDER = "berth:location";
const SHUTDOWN_SETTLE_MS = 5_000;

/**
 * Berth's host: sessions, turns, holds, questions, terminals and services of real ACP
 * agents, with a journal that survives restarts. The server puts this on the network.
 */
export class Host {
  readonly connections: ConnectionCleanups;
  private readonly bus: SessionBus;
  private readonly recordListeners: Listeners<StampedRecord>;
  private readonly changeListeners: Listeners<string>;
  private readonly executions: Executions;
  private readonly cache: LocationServicesCache<LocationServices>;
  private readonly retention: LocationRetention<LocationServices>;
  private readonly journal: Journal;
  private readonly desk: QuestionDesk;
  private readonly children: AgentChildren;
  private readonly holds: SessionHolds<AgentChild>;
  private readonly turns: Turns;
  private readonly registry: AgentRegistry;
  private readonly profiles: AgentProfiles;
  private readonly logins: AgentLogins;
  private readonly transient: TransientChildren;
  private readonly outside: AgentsOutsideSessions;
  private readonly log: Logger;
  /** The host's one source of time (virtual in tests): edges that schedule by the host's records use it too. */
  readonly clock: Clock;
  private nextRecordId: number;
  private readonly ledger: ProcessGroupLedger;
  private readonly housekeeping: Housekeeping;
  private state: "running" | "stopping" | "stopped" = "running";

  private constructor(
    readonly config: Config,
    readonly dataDir: string,
    private readonly store: Store,
    clock: Clock,
    log: Logger,
  ) {
    this.clock = clock;
    this.log = log;
    // A failing observer (an event stream, a metric) must never break the lifecycle that notifies it.
    this.recordListeners = new Listeners((error) => log.error({ err: error }, "lifecycle record listener failed"));
    this.changeListeners = new Listeners((error) => log.error({ err: error }, "session change listener failed"));
    this.bus = new SessionBus((sessionId, error) => log.error({ err: error, sessionId }, "session subscriber failed and was dropped"));
    const paths = dataPaths(dataDir);
    const record = (r: HostRecord) => this.record(r);
    // The host's one writer: every write below goes through it, queued; the event loop never waits on the database.
    this.journal = new Journal(store, this.bus, (key) => this.retention.touch(key), clock, log, config.writeTimeout);
    this.nextRecordId = store.lifecycleRecords.lastId() + 1;
    this.housekeeping = new Housekeeping({
      clock,
      log,
      terminalOutputDir: paths.terminalOutput,
      outputRetentionMs: config.outputRetention,
      pruneRecordsBefore: (at) => this.journal.call("lifecycleRecords.pruneBefore", [at]),
      recordRetentionMs: config.recordRetention,
    });
    const ledger: ProcessGroupLedger = {
      // Queued: a host killed before it is stored leaves a group the next start still finds by its marker.
      record: (group) => this.journal.queue("processGroups.record", [group]),
      // A crashed child's group may finish stopping after shutdown closed the store: what it would
      // have forgotten is found gone and dropped by the next start's reaping.
      forget: (pgid) => {
        if (this.state !== "stopped") this.journal.queue("processGroups.forget", [pgid]);
      },
      list: () => store.processGroups.list(),
    };
    this.ledger = ledger;
    this.connections = new ConnectionCleanups((error, id) => log.error({ err: error, cleanup: id }, "connection cleanup failed"));
    this.registry = new AgentRegistry(config.agents, config.defaultAgent, paths.agentState);
    this.logins = new AgentLogins(config.rememberLogins === "file" ? join(dataDir, "agent-logins.json") : undefined, (error) =>
      log.error({ err: error }, "agent logins file unreadable; clients log in again"),
    );
    this.transient = new TransientChildren({
      registry: this.registry,
      ledger,
      log,
      cwd: paths.agentState,
      initializeTimeoutMs: config.initializeTimeout,
      stopTimeoutMs: config.stopTimeout,
      initialized: (agentId, child) => this.profiles.remember(agentId, child.initializeResponse),
      record,
    });
    this.profiles = new AgentProfiles(
      store,
      this.registry,
      clock,
      (agentId) =>
        this.transient.run(agentId, async (child) => child.initializeResponse, {
          purpose: "initialize",
          method: "initialize",
          replayLogin: false,
        }),
      (profile) => this.journal.queue("agentProfiles.put", [profile]),
    );
    this.outside = new AgentsOutsideSessions({
      registry: this.registry,
      profiles: this.profiles,
      logins: this.logins,
      transient: this.transient,
      childOf: (sessionId) => this.holds.child(sessionId),
    });
    this.executions = new Executions(clock, record);
    this.cache = new LocationServicesCache<LocationServices>({
      boot: (key) =>
        bootLocationServices(key, {
          services: config.services,
          terminalOutputDir: paths.terminalOutput,
          terminalOutputLimit: config.terminalOutputLimit,
          stopTimeoutMs: config.stopTimeout,
          ledger,
          log: (line, fields) => log.info({ ...fields, directory: key.directory, workspace: key.workspace }, line),
        }),
      close: (key, located, reason) => this.closeLocation(key, located, reason),
    });
    this.retention = new LocationRetention<LocationServices>({
      clock,
      executions: this.executions,
      cache: this.cache,
      idleTtlMs: config.idleTtl,
      maxActiveHoldMs: config.maxActiveHold,
      sweepIntervalMs: config.sweepInterval,
      cancelPendingQuestions: (key) => {
        for (const session of this.sessionsAt(key)) this.desk.cancelForSession(session.id, "inactivity");
      },
      record,
      onError: (error, key) => log.error({ err: error, directory: key.directory, workspace: key.workspace }, "location cleanup step failed"),
      // evictHeld off (the default): a location a client still holds a session of is kept, up to the cap.
      ...(config.evictHeld ? {} : { isHeld: (key: LocationKey) => this.sessionsAt(key).some((session) => this.clientHolders(session.id) > 0) }),
    });
    this.desk = new QuestionDesk({
      store,
      journal: this.journal,
      bus: this.bus,
      clock,
      record,
      peekLocation: (sessionId) => {
        const key = this.keyOf(sessionId);
        return key && this.retention.peek(key);
      },
      keyOf: (sessionId) => this.keyOf(sessionId),
    });
    this.children = new AgentChildren({
      store,
      registry: this.registry,
      journal: this.journal,
      desk: this.desk,
      clock,
      ledger,
      log,
      record,
      initializeTimeoutMs: config.initializeTimeout,
      stopTimeoutMs: config.stopTimeout,
      openLocation: (key) => this.retention.open(key),
      peekLocation: (key) => this.retention.peek(key),
      onChildLost: (sessionId, child) => this.holds.childLost(sessionId, child),
      onChildWithoutReload: (sessionId) => void this.holds.hold(sessionId, LOCATION_HOLDER),
      profiles: this.profiles,
      logins: this.logins,
      relay: {
        // After the updates the agent sent before: clients see its messages in its order.
        request: (sessionId, method, params, signal) => {
          const request = new RelayedRequest(method, params, signal);
          this.journal.afterCommit(() => {
            this.bus.publish(sessionId, { type: "agent_request", request });
            request.seal();
          });
          return request.answer;
        },
        notification: (sessionId, method, params) =>
          this.journal.afterCommit(() => this.bus.publish(sessionId, { type: "agent_notification", method, params })),
      },
    });
    this.holds = new SessionHolds<AgentChild>({
      clock,
      releaseGraceMs: config.releaseGrace,
      acquire: (sessionId) => {
        // A real need at the location: until the agent is up, the location is not evicted under it (rule 4's re-check sees it).
        const key = this.keyOf(sessionId);
        const need = key && this.retention.beginNeed(key);
        return this.children.acquire(sessionId).then(
          (child) => {
            need?.end(true);
            return child;
          },
          (error: unknown) => {
            need?.end(false);
            record({ kind: "acquisition_failed", sessionId, error: error instanceof Error ? error.message : String(error) });
            throw error;
          },
        );
      },
      release: (sessionId, child) => this.children.release(sessionId, child, "grace"),
      turns: this.executions,
      onError: (error, sessionId) => log.error({ err: error, sessionId }, "agent child release failed"),
    });
    this.turns = new Turns({
      store,
      holds: this.holds,
      executions: this.executions,
      journal: this.journal,
      bus: this.bus,
      desk: this.desk,
      clock,
      record,
      interruptTimeoutMs: config.interruptTimeout,
      maxActiveHoldMs: config.maxActiveHold,
      onError: (error, sessionId) => log.error({ err: error, sessionId }, "stopping an unresponsive agent failed"),
      stopUnresponsive: async (sessionId, child) => {
        this.noticeAgentStopped(sessionId, "unresponsive");
        this.holds.childLost(sessionId, child);
        await this.children.release(sessionId, child, "unresponsive");
      },
    });
  }

  /** Opens the journal, reaps what a dead previous run left behind, and starts the sweeps. */
  static async start(options: HostOptions): Promise<Host> {
    const paths = dataPaths(options.dataDir);
    for (const dir of [paths.dataDir, paths.terminalOutput, paths.agentState]) mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Only read on this thread (the writer thread writes): a read never waits, and a write here would fail at once rather than wait.
    const store = Store.open(paths.database, { busyTimeoutMs: 0 });
    const host = new Host(options.config, options.dataDir, store, options.clock ?? systemClock, options.logger ?? silentLogger());
    try {
      await restoreAfterRestart({
        store,
        ledger: host.ledger,
        journal: host.journal,
        clock: host.clock,
        record: (r) => host.record(r),
        log: host.log,
        stopTimeoutMs: options.config.stopTimeout,
      });
    } catch (error) {
      // Nothing half-started stays behind: the journal thread and the database are closed.
      await host.journal.close();
      store.close();
      throw error;
    }
    host.retention.start();
    host.housekeeping.start();
    host.log.info({ dataDir: options.dataDir, sessions: store.sessions.list().length }, "host started");
    return host;
  }

  // ── sessions ──────────────────────────────────────────────────────────

  /** Stores a new session; settles once it is stored, or fails after `writeTimeout` if the store cannot write. */
  async createSession(params: NewSessionParams): Promise<SessionView> {
    this.assertRunning();
    const agent = params.agent ?? this.registry.defaultAgent;
    this.registry.resolve(agent);
    const key = locationKey(params.cwd, params.workspace);
    assertDirectory(key.directory);
    const id = randomUUID();
    const row = {
      id,
      agent,
      cwd: key.directory,
      workspace: key.workspace ?? null,
      agentRequest: params.agentRequest ?? null,
      createdAt: this.clock.now(),
    };
    try {
      await this.journal.within(this.journal.call("sessions.create", [row], id), "the new session", "it was not created");
    } catch (error) {
      // The client is told it failed: once the store writes again, it must not appear after all.
      this.journal.queue("sessions.delete", [id]);
      throw error;
    }
    return this.sessionView(this.requireSession(id));
  }

  /**
   * A person names the session (`PATCH /api/sessions/:id`): stored, then told to every client holding
   * it as ACP's `session_info_update`, journaled so that a replay tells it too. Null clears the title.
   */
  renameSession(sessionId: string, title: unknown): SessionView {
    this.assertRunning();
    const session = this.requireSession(sessionId);
    const next = normalTitle(title);
    this.journal.renameSession(sessionId, next);
    this.journal.update(sessionId, locationOf(session), titleUpdate(next));
    this.changed(sessionId);
    return this.sessionView(this.requireSession(sessionId));
  }

  /**
   * A client reopens the session (`session/load`, `session/resume`) at `cwd` — which must be the
   * session's — asking `reopen` of its agent: the next child that reopens it gets that request.
   */
  reopening(sessionId: string, cwd: string, reopen: ReopenRequest): void {
    const session = this.requireSession(sessionId);
    const key = locationKey(cwd, session.workspace);
    if (key.directory !== session.cwd) {
      throw new InvalidLocationError(`session "${sessionId}" works in ${session.cwd}, not ${key.directory}: reopen it there`);
    }
    this.journal.setSession(sessionId, { agentRequest: { ...agentRequestOf(session.agentRequest), reopen } });
  }

  /** What a `session/new`, `load` or `resume` answer says of the session: its modes, models, config options, `_meta`. */
  sessionAnswer(sessionId: string): Record<string, Json> {
    return answerFields(this.agentState(sessionId));
  }

  /** The session's modes, models, config options and commands, as its agent last reported them. */
  agentState(sessionId: string): AgentSessionState {
    return stateOf(this.requireSession(sessionId).agentState);
  }

  getSession(sessionId: string): SessionView | undefined {
    const session = this.store.sessions.get(sessionId);
    return session && this.sessionView(session);
  }

  listSessions(filter: { cwd?: string } = {}): SessionView[] {
    const cwd = filter.cwd === undefined ? undefined : locationKey(filter.cwd).directory;
    return this.store.sessions.list(cwd === undefined ? {} : { cwd }).map((session) => this.sessionView(session));
  }

  /** Every session's agent-child state and pid, for gauges: one query, nothing read per session. */
  sessionStates(): { readonly state: SessionChildState; readonly pid: number | null }[] {
    return this.store.sessions.list({}).map((session) => ({ state: this.holds.state(session.id), pid: this.holds.child(session.id)?.pid ?? null }));
  }

  events(sessionId: string, options: { after?: number; limit?: number } = {}): JournalEvent[] {
    this.requireSession(sessionId);
    return this.store.events.read(sessionId, options);
  }

  /** Iterates a session's whole journal without loading it into memory. */
  replay(sessionId: string): IterableIterator<JournalEvent> {
    this.requireSession(sessionId);
    return this.store.events.replay(sessionId);
  }

  /** Closes and deletes a session: its turn is interrupted, its child stopped, its journal removed. */
  async deleteSession(sessionId: string): Promise<void> {
    this.requireSession(sessionId);
    await this.executions.interrupt(sessionId, { reason: "user", awaitSettlement: true });
    this.desk.cancelForSession(sessionId, "session deleted");
    this.holds.forget(sessionId);
    // A child still starting would otherwise come up for a session that no longer exists.
    await this.children.whenAcquired(sessionId);
    const child = this.holds.child(sessionId);
    if (child) {
      this.holds.childLost(sessionId, child);
      await this.children.release(sessionId, child, "deleted");
    }
    // Whenever it is stored (later, if the store cannot write now), the session is forgotten and its deletion recorded.
    const deleted = this.journal.call("sessions.delete", [sessionId], sessionId).then(() => {
      this.journal.forget(sessionId);
      this.children.forget(sessionId);
      this.record({ kind: "session_deleted", sessionId });
    });
    await this.journal.within(deleted, "the deletion", "it stays queued and is done once the store writes again");
  }

  // ── holds, turns, subscriptions ──────────────────────────────────────

  /** Registers `holderId` on the session at once; `ticket.child` settles when its agent is ready. */
  hold(sessionId: string, holderId: string): HoldTicket<AgentChild> {
    this.assertRunning();
    this.requireSession(sessionId);
    const ticket = this.holds.hold(sessionId, holderId);
    this.changed(sessionId);
    const changed = () => this.changed(sessionId);
    void ticket.child.then(changed, changed);
    return {
      get sessionId() {
        return ticket.sessionId;
      },
      holderId: ticket.holderId,
      incarnation: ticket.incarnation,
      get child() {
        return ticket.child;
      },
      isCurrent: () => ticket.isCurrent(),
      release: () => {
        const released = ticket.release();
        if (released) changed();
        return released;
      },
    };
  }

  /** Runs a turn; `extra` (`_meta`, ...) goes to the agent as the client sent it, and its whole answer comes back. */
  prompt(sessionId: string, prompt: ContentBlock[], extra: Omit<PromptRequest, "sessionId" | "prompt"> = {}): Promise<PromptResponse> {
    this.assertRunning();
    return this.turns.prompt(sessionId, prompt, extra);
  }

  /**
   * A request for the session's agent that Berth does not handle itself (a mode, a model, a config
   * option, an extension method): the session is held while it runs, so a released child comes
   * back; the answer and any error come back unchanged, and what it changed is kept.
   */
  async forward(sessionId: string, method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    this.assertRunning();
    this.requireSession(sessionId);
    const ticket = this.holds.hold(sessionId, `request:${randomUUID()}`);
    try {
      const child = await ticket.child;
      const result = await child.request(method, params, signal);
      const session = this.store.sessions.get(sessionId);
      const next = session && withRequest(stateOf(session.agentState), method, params, result);
      if (next) this.journal.setSession(sessionId, { agentState: next });
      return result;
    } finally {
      ticket.release();
    }
  }

  /** A notification for an agent outside any session: to its running child among `nearSessions`, else dropped. */
  notifyAgentOf(agentId: string, method: string, params: unknown, nearSessions: readonly string[]): boolean {
    return this.outside.notify(agentId, method, params, nearSessions);
  }

  /** A notification for the session's agent (an extension): passed on if it has a child, else dropped. */
  notifyAgent(sessionId: string, method: string, params: unknown): boolean {
    const child = this.holds.child(sessionId);
    if (!child) return false;
    void child.notify(method, params);
    return true;
  }

  // ── agents ───────────────────────────────────────────────────────────

  /** The agent's own `initialize` answer (stored; a probe child only the first time). */
  agentProfile(agentId: string = this.registry.defaultAgent): Promise<InitializeResponse> {
    this.assertRunning();
    return this.outside.profile(agentId);
  }

  /** `authenticate` with the agent; remembered and replayed to every later child of that agent. */
  authenticate(agentId: string, request: AuthenticateRequest, asker: Asker = {}): Promise<unknown> {
    this.assertRunning();
    return this.outside.authenticate(agentId, request, asker);
  }

  /** A request for an agent outside any session (an extension method). */
  askAgent(agentId: string, method: string, params: unknown, asker: Asker = {}, nearSessions: readonly string[] = []): Promise<unknown> {
    this.assertRunning();
    return this.outside.ask(agentId, method, params, asker, nearSessions);
  }

  cancel(sessionId: string): Promise<boolean> {
    return this.turns.cancel(sessionId);
  }

  subscribe(sessionId: string, listener: SessionListener): () => void {
    return this.bus.subscribe(sessionId, listener);
  }

  /** A terminal's output as the agent would read it; undefined if its location is not loaded or it is gone. Never boots. */
  terminalOutput(sessionId: string, terminalId: string): TerminalOutputResult | undefined {
    const key = this.keyOf(sessionId);
    const located = key && this.retention.peek(key);
    try {
      return located?.terminals.output(terminalId);
    } catch {
      return undefined;
    }
  }

  // ── questions ────────────────────────────────────────────────────────

  pendingQuestions(sessionId?: string): QuestionView[] {
    return this.desk.pending(sessionId);
  }

  question(questionId: string): QuestionView | undefined {
    return this.desk.get(questionId);
  }

  /** Settles once the answer is stored (then the agent has it), or fails after `writeTimeout` if the store cannot write. */
  answerQuestion(questionId: string, answer: QuestionAnswer): Promise<QuestionView> {
    return this.desk.answer(questionId, answer);
  }

  /** Whether the store writes (else since when and why), and how many writes wait: for `/healthz` and metrics. */
  storeHealth(): StoreHealthView {
    return this.journal.health();
  }

  // ── locations and records ────────────────────────────────────────────

  /** Cached locations only: listing never boots one. */
  locations(): LocationView[] {
    return this.retention.list().map((status) => {
      const located = this.cache.peek(status.key);
      const sessions = this.sessionsAt(status.key);
      return {
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

  /** Something about a session changed (holders, child, turn, questions): views should be re-read. */
  onSessionChanged(listener: (sessionId: string) => void): () => void {
    return this.changeListeners.add(listener);
  }

  onRecord(listener: (record: StampedRecord) => void): () => void {
    return this.recordListeners.add(listener);
  }

  recentRecords(limit = 100): StampedRecord[] {
    // Records are streamed at once: those still queued are listed too.
    const rows = new Map(this.store.lifecycleRecords.recent(limit).map((row) => [row.id, row]));
    for (const row of this.journal.queuedRecords()) rows.set(row.id, row);
    return [...rows.values()].slice(-limit).map((row) => ({
      id: row.id,
      at: row.at,
      message: messageOf(row.payload as unknown as HostRecord),
      record: row.payload as unknown as HostRecord,
    }));
  }

  agents(): string[] {
    return this.registry.ids();
  }

  /** Waits for every location cleanup the sweeps started (tests, shutdown). */
  whenSettled(): Promise<void> {
    return this.retention.whenSettled();
  }

  /**
   * Stops accepting work, interrupts running turns with reason `shutdown`, stops every
   * child and location service as a process group, and closes the journal.
   */
  async shutdown(): Promise<void> {
    if (this.state !== "running") return;
    this.state = "stopping";
    this.retention.stop();
    this.housekeeping.stop();
    const interrupted = this.executions
      .active()
      .map((execution) => this.executions.interrupt(execution.sessionId, { reason: "shutdown", awaitSettlement: true }));
    let settleTimer: NodeJS.Timeout | undefined;
    const settleBound = new Promise((resolve) => (settleTimer = setTimeout(resolve, SHUTDOWN_SETTLE_MS)));
    await Promise.race([Promise.all(interrupted), settleBound]);
    clearTimeout(settleTimer);
    this.holds.dispose();
    this.turns.dispose();
    for (const session of this.store.sessions.list()) {
      if (this.holds.child(session.id)) this.noticeAgentStopped(session.id, "shutdown");
    }
    await Promise.all([this.children.stopAll(), this.transient.stopAll()]);
    await this.cache.closeAll();
    await this.journal.close();
    this.store.close();
    this.state = "stopped";
    this.log.info({}, "host stopped");
  }

  // ── internals ────────────────────────────────────────────────────────

  private sessionView(session: Session): SessionView {
    const execution = this.executions.get(session.id);
    const child = this.holds.child(session.id);
    return {
      id: session.id,
      agent: session.agent,
      cwd: session.cwd,
      workspace: session.workspace,
      title: session.title,
      state: this.holds.state(session.id),
      pid: child?.pid ?? null,
      holders: this.clientHolders(session.id),
      turnActive: execution !== undefined,
      turnStartedAt: execution?.startedAt ?? null,
      pendingQuestions: this.store.questions.listPending(session.id).length,
      releaseAt: this.holds.releaseAt(session.id) ?? null,
      preview: this.store.events.lastWords(session.id),
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
    };
  }

  private record(record: HostRecord): void {
    const at = this.clock.now();
    const message = messageOf(record);
    // Numbered here (after the highest id ever stored) and queued: recording never waits on the database.
    const id = this.nextRecordId++;
    this.journal.record(id, record.kind, record, at);
    this.log.info({ ...record }, message);
    const stamped: StampedRecord = { id, at, message, record };
    this.recordListeners.emit(stamped);
    if ("sessionId" in record) this.changed(record.sessionId);
  }

  private changed(sessionId: string): void {
    this.changeListeners.emit(sessionId);
  }

  /** Holders that are clients (connections, views, requests): not the host's own location holder, not turns. */
  private clientHolders(sessionId: string): number {
    return this.holds.holderIds(sessionId).filter((id) => id !== LOCATION_HOLDER && !id.startsWith("turn:")).length;
  }

  /**
   * A held session's agent is being stopped while clients still hold it: every client sees why,
   * in the conversation itself. Nothing is stopped silently.
   */
  private noticeAgentStopped(sessionId: string, reason: CloseReason | "unresponsive"): void {
    if (this.clientHolders(sessionId) === 0) return;
    const key = this.keyOf(sessionId);
    if (!key) return;
    const why = {
      idle: `its location was idle for ${formatDuration(this.config.idleTtl)} and evictHeld is on`,
      inactivity: `nothing was recorded at its location for ${formatDuration(this.config.maxActiveHold)}, the longest a location is kept without progress`,
      shutdown: "the host is shutting down",
      unresponsive: `it did not end its interrupted turn within ${formatDuration(this.config.interruptTimeout)}`,
    }[reason];
    try {
      this.journal.notice(
        sessionId,
        key,
        `Berth stopped this session's agent (reason: ${reason}): ${why}. The conversation is kept; the next prompt starts the agent again.`,
        {
          kind: "agent_stopped",
          reason,
        },
      );
    } catch (error) {
      this.log.error({ err: error, sessionId }, "agent stop notice failed");
    }
  }

  /** Eviction: the location's agent children, terminals, questions and services are stopped; each stop awaited. */
  private async closeLocation(key: LocationKey, located: LocationServices, reason: CloseReason): Promise<void> {
    const stops = this.sessionsAt(key).map(async (session) => {
      this.holds.release(session.id, LOCATION_HOLDER);
      const child = this.holds.child(session.id);
      if (!child) return;
      this.noticeAgentStopped(session.id, reason);
      this.holds.childLost(session.id, child);
      await this.children.release(session.id, child, "evicted");
    });
    await Promise.allSettled(stops);
    await closeLocationServices(located, "location evicted");
  }

  private sessionsAt(key: LocationKey): Session[] {
    return this.store.sessions.list({ cwd: key.directory }).filter((session) => locationOf(session).id === key.id);
  }

  private keyOf(sessionId: string): LocationKey | undefined {
    const session = this.store.sessions.get(sessionId);
    return session && locationOf(session);
  }

  private requireSession(sessionId: string): Session {
    const session = this.store.sessions.get(sessionId);
    if (!session) throw new SessionNotFoundError(sessionId);
    return session;
  }

  private assertRunning(): void {
    if (this.state !== "running") throw new HostStoppedError();
  }
}

function assertDirectory(directory: string): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(directory).isDirectory();
  } catch {
    throw new InvalidLocationError(`directory does not exist: ${directory}`);
  }
  if (!isDirectory) throw new InvalidLocationError(`not a directory: ${directory}`);
}
