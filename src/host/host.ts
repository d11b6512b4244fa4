import { mkdirSync } from "node:fs";
import { sandboxAvailabilityAsync, type SandboxAvailability } from "../sandbox/availability.js";
import type { AuthenticateRequest, ContentBlock, InitializeResponse, LogoutRequest, PromptRequest, PromptResponse } from "@agentclientprotocol/sdk";
import type { AgentChild } from "../agents/agent-child.js";
import { removeUnlistedAgents } from "../agents/agent-install.js";
import type { Config } from "../config/config-schema.js";
import { dataPaths } from "../config/paths.js";
import { isPostgresUrl } from "../config/store-url.js";
import { systemClock, type Clock } from "../lifecycle/clock.js";
import type { ConnectionCleanups } from "../lifecycle/connection-cleanups.js";
import type { HoldTicket, SessionChildState } from "../lifecycle/session-holds.js";
import { canonicalDirectory } from "../lifecycle/location-key.js";
import { lookAtDirectory, type DirectoryPresence } from "../location/directory-presence.js";
import type { QuestionAnswer } from "../location/question-types.js";
import type { TerminalOutputResult } from "../location/terminal.js";
import type { JournalEvent } from "../store/events.js";
import type { Json } from "../store/index.js";
import { ProcessScope, scopeOf, type ProcessTracking } from "../processes/index.js";
import { sqliteHostStore, type HostStore } from "../store/host-store.js";
import { type AgentDetails, type CatalogueView, catalogueView, readAgentCatalogue, withLoginStates } from "./agent-catalogue.js";
import type { InstallEvent, InstallStart } from "./agent-installs.js";
import type { ReopenRequest } from "./agent-request.js";
import { answerFields, stateOf, type AgentSessionState } from "./agent-session-state.js";
import type { Asker } from "./agents-outside-sessions.js";
import type { NativePage } from "./native-sessions.js";
import type { AgentLoginView } from "./agent-login-desk.js";
import type { AuthMethodView } from "../protocol/auth-methods.js";
import type { Fleet } from "./fleet.js";
import { composeHost, type HostParts } from "./host-composition.js";
import { questionView } from "./question-desk.js";
import { HostStoppedError } from "./host-errors.js";
import { holdAndTell } from "./holders.js";
import { stampedOf, type StampedRecord } from "./host-records.js";
import { OwnedByOtherHostError, refusalFor } from "./owned-elsewhere.js";
import { silentLogger, type Logger } from "./logger.js";
import type { NewSessionParams } from "./session-catalog.js";
import type { SessionListener } from "./session-bus.js";
import { deleteSession } from "./session-deletion.js";
import { forkSession, type ForkRequest } from "./session-fork.js";
import { createWorktreeSession, discardSession, landSession } from "./session-worktrees.js";
import type { WorktreeRequest } from "../worktrees/worktree-creation.js";
import { worktreeStatus, type WorktreeStatusView } from "./worktree-status.js";
import { forwardToAgent, notifyAgent, type ForwardOptions } from "./session-requests.js";
import { locationOf } from "./session-location.js";
import { normalTitle, personTitled, titleUpdate } from "./session-titles.js";
import { shutDown, type ShutdownOptions } from "./shutdown.js";
import { restoreAfterRestart } from "./startup.js";
import { ReviewDesk, type NewComment } from "./review-desk.js";
import { sendReviewComments } from "./review-sending.js";
import type { ReviewComment } from "../store/review-comments.js";
import { readChanges, type ChangeSet } from "../changes/change-set.js";
import { commentablePath, readChangedFile, type ChangedFileView } from "../changes/changed-file.js";
import { changesBase } from "./session-changes-base.js";
import { LoginRunner } from "../logins/login-runner.js";
import type { PromptOptions } from "./turns.js";
import type { LoginCommandResolver } from "../logins/login-command.js";
import type { StoreHealthView } from "./store-health.js";
import type { HeartbeatHealthView } from "./heartbeat-health.js";
import type {
  AgentLoginStatus,
  FleetCounts,
  HostView,
  LocationView,
  PeerLiveSink,
  QuestionView,
  SessionKey,
  SessionOwner,
  SessionPage,
  SessionView,
} from "./views.js";

export { OrderlySteps } from "./orderly-steps.js";
export { sweepLeftovers } from "./startup.js";

export interface HostOptions {
  readonly config: Config;
  /** Where the journal, terminal output and agent state live (the caller resolves `config.dataDir` and flags). */
  readonly dataDir: string;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** What runs an agent's terminal login (tests give fixtures); by default the agent's own, from its auth methods. */
  readonly loginCommands?: LoginCommandResolver;
  /** The configuration file Berth read, if any: hidden from sandboxes (it may hold the cluster secret). */
  readonly configFile?: string;
}

/**
 * Berth's host: sessions, turns, holds, questions, terminals and services of real ACP
 * agents, with a journal that survives restarts. The server puts this on the network.
 * This class is the API the protocol edges use; the parts it delegates to are wired in
 * `host-composition.ts`.
 */

export class Host {
  readonly config: Config;
  readonly dataDir: string;
  readonly connections: ConnectionCleanups;

  /** The host's one source of time (virtual in tests): edges that schedule by the host's records use it too. */
  readonly clock: Clock;
  private readonly review: ReviewDesk;
  /** The agent's own sessions being imported, by id: a second load of one waits for the first's import. */
  private readonly importing = new Map<string, Promise<boolean>>();

  /** Agents' terminal logins: one per agent at a time, in a pseudo-terminal, their screens in memory only. */
  readonly logins: LoginRunner;

  private constructor(
    private readonly parts: HostParts,
    /** This host in a fleet on PostgreSQL; undefined on the embedded SQLite store. */
    private readonly fleet: Fleet | undefined,
    loginCommands: LoginCommandResolver | undefined,
  ) {
    // Under the host's ledger: a login a crashed host left behind is reaped with its agents at the next start.
    this.logins = new LoginRunner({
      resolve: loginCommands ?? ((agentId, methodId) => parts.outside.terminalLoginCommand(agentId, methodId)),
      log: (line, fields) => parts.log.info(fields, line),
      ledger: parts.ledger,
      stop: { graceMs: parts.config.stopTimeout },
    });
    this.clock = parts.clock;
    this.review = new ReviewDesk(parts);
    this.config = parts.config;
    this.dataDir = parts.dataDir;
    this.connections = parts.connections;
  }

  /** Opens the journal, reaps what a dead previous run left behind, and starts the sweeps. */
  static async start(options: HostOptions): Promise<Host> {
    const paths = dataPaths(options.dataDir);
    for (const dir of [paths.dataDir, paths.terminalOutput, paths.agentState]) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const logger = options.logger ?? silentLogger();
    // Each probe may run a short command: begun now, both run while the store opens, and are awaited where needed.
    const scope = ProcessScope.forDataDir(paths.dataDir);
    // Awaited by restoreAfterRestart, which reports a failure.
    scope.probe().catch(() => undefined);
    const sandboxProbe = sandboxAvailabilityAsync(options.config.sandbox.bwrap);
    // On a fleet's PostgreSQL store the host reads its mirror and writes through the shared store (loaded only then).
    const fleet = isPostgresUrl(options.config.store)
      ? await (await import("./fleet.js")).Fleet.open(options.config, paths.dataDir, logger)
      : undefined;
    let hostStore: HostStore;
    try {
      hostStore = fleet ? fleet.hostStore() : sqliteHostStore(paths.database);
    } catch (error) {
      await fleet?.close();
      throw error;
    }
    const store = hostStore.reads;
    const parts = composeHost(
      options.config,
      options.dataDir,
      hostStore,
      options.clock ?? systemClock,
      logger,
      fleet && { hostId: fleet.host.id, peers: fleet.directory },
      options.configFile,
    );
    const { journal, ledger, clock, records, log } = parts;
    try {
      await restoreAfterRestart({
        store,
        scope,
        ledger,
        journal,
        clock,
        record: (r) => records.record(r),
        log,
        stopTimeoutMs: options.config.stopTimeout,
      });
    } catch (error) {
      // Nothing half-started stays behind: the journal thread and the database are closed.
      await journal.close();
      store.close();
      await fleet?.close();
      throw error;
    }
    // A removed agent's files stayed for the sessions running it; no child of the previous run is left now.
    try {
      const removed = removeUnlistedAgents(options.dataDir);
      if (removed.length > 0) log.info({ agents: removed }, "removed agents' files deleted");
    } catch (error) {
      log.warn({ err: error }, "removed agents' files not deleted");
    }
    parts.retention.start();
    parts.housekeeping.start();
    fleet?.start(parts);
    log.info({ dataDir: options.dataDir, store: fleet ? "postgres" : "sqlite", sessions: store.sessions.list().length }, "host started");
    // Probed once, at start: an operator sees whether sessions may ask for a sandbox (docs/sandbox.md).
    log.info({ sandbox: await sandboxProbe }, "sandboxes");
    return new Host(parts, fleet, options.loginCommands);
  }

  // ── sessions ──────────────────────────────────────────────────────────

  /**
   * Stores a new session; settles once it is stored, or fails after `writeTimeout` if the store cannot write. With
   * `worktree`, in a git worktree of its own, made and set up first (docs/worktrees.md); with `title`, named so.
   */
  async createSession(params: NewSessionParams & { readonly worktree?: WorktreeRequest; readonly title?: string }): Promise<SessionView> {
    this.assertRunning();
    const { worktree, title, ...plain } = params;
    const id = worktree ? await createWorktreeSession(this.parts, plain, worktree, title) : await this.parts.catalog.create(plain);
    return title === undefined ? this.parts.views.session(id)! : this.renameSession(id, title);
  }

  /**
   * A new session forked from `sessionId` (docs/api.md, `session/fork`): the agent's fork of its conversation and a copy
   * of its journal, both stored before it settles with the new session.
   */
  async forkSession(sessionId: string, request: ForkRequest, signal?: AbortSignal): Promise<SessionView> {
    this.assertRunning();
    const id = await forkSession(this.parts, sessionId, request, signal);
    return this.parts.views.session(id)!;
  }

  /** Merges the session's worktree into its base and removes it (docs/worktrees.md, "Land"); the record as stored. */
  async landSession(sessionId: string, message?: string): Promise<SessionView> {
    this.assertRunning();
    await landSession(this.parts, sessionId, message);
    return this.parts.views.session(sessionId)!;
  }

  /** Removes the session's worktree and its branch, whatever they held (docs/worktrees.md, "Discard"). */
  async discardSession(sessionId: string): Promise<SessionView> {
    this.assertRunning();
    await discardSession(this.parts, sessionId);
    return this.parts.views.session(sessionId)!;
  }

  /** An active worktree session's ahead/behind against its base and whether it is ready to review (docs/worktrees.md). */
  worktreeStatus(sessionId: string): Promise<WorktreeStatusView> {
    this.parts.catalog.require(sessionId);
    return worktreeStatus(this.parts.views.session(sessionId)!);
  }

  /**
   * A person names the session (`PATCH /api/sessions/:id`): stored, then told to every client holding
   * it as ACP's `session_info_update`, journaled so that a replay tells it too. A person's name outlasts the
   * agent's own; null clears it (the agent's own title shows again if it gave one, else the next prompt titles it).
   */
  renameSession(sessionId: string, title: unknown): SessionView {
    this.assertRunning();
    const session = this.parts.catalog.require(sessionId);
    const titled = personTitled(stateOf(session.agentState), normalTitle(title));
    this.parts.journal.setSession(sessionId, { agentState: titled.agentState });
    this.parts.journal.renameSession(sessionId, titled.title);
    this.parts.journal.update(sessionId, locationOf(session), titleUpdate(titled.title));
    this.parts.sessionChanges.emit(sessionId);
    return this.parts.views.session(sessionId)!;
  }

  /**
   * A client reopens the session (`session/load`, `session/resume`) at `cwd` — which must be the
   * session's — asking `reopen` of its agent: the next child that reopens it gets that request.
   */
  reopening(sessionId: string, cwd: string, reopen: ReopenRequest): void {
    this.parts.catalog.reopening(sessionId, cwd, reopen);
  }

  /**
   * Before a client opens a session (ACP `session/load`, `session/resume`): a session another host of the fleet owns,
   * whose host is offline, becomes this host's if `fleet.adopt` is on and its directory exists here (docs/fleet.md,
   * "Adoption"). True once adopted; false if there was nothing to adopt (this host's own session, an unknown one, or
   * SQLite). Otherwise fails with `OwnedByOtherHostError` (409 `owned_by_other_host`) saying why it is not run here.
   */
  async adopt(sessionId: string): Promise<boolean> {
    this.assertRunning();
    return (await this.fleet?.adopt(sessionId)) ?? false;
  }

  /** What a `session/new`, `load` or `resume` answer says of the session: its modes, models, config options, `_meta`. */
  sessionAnswer(sessionId: string): Record<string, Json> {
    return answerFields(this.agentState(sessionId));
  }

  /** The session's modes, models, config options and commands, as its agent last reported them. */
  agentState(sessionId: string): AgentSessionState {
    return stateOf(this.parts.catalog.require(sessionId).agentState);
  }

  getSession(sessionId: string): SessionView | undefined {
    return this.parts.views.session(sessionId);
  }

  /** Whether {@link getSession} would find the session (this host's or a peer's), without building its view. */
  hasSession(sessionId: string): boolean {
    return this.parts.views.exists(sessionId);
  }

  listSessions(filter: { cwd?: string } = {}): SessionView[] {
    return this.parts.views.sessions(filter);
  }

  /** A page of {@link listSessions}, read by keyset from where the last page ended (`after`). */
  sessionPage(query: { cwd?: string; agent?: string; after?: SessionKey; limit: number }): SessionPage {
    return this.parts.views.page(query);
  }

  /** This host's own session, never another host's of the fleet: what its peers follow of it. */
  ownSession(sessionId: string): SessionView | undefined {
    return this.parts.views.ownSession(sessionId);
  }

  /** This host's own sessions, never another host's of the fleet. */
  ownSessions(): SessionView[] {
    // Once stopped its store is closed: the caller (a peer connecting during shutdown) is told so, not handed a store error.
    if (this.parts.status.state === "stopped") throw new HostStoppedError();
    return this.parts.views.ownSessions();
  }

  /** How this host finds its children's descendants: a cgroup per child, or the environment marker alone. */
  processTracking(): ProcessTracking {
    return scopeOf(this.parts.ledger).tracking;
  }

  /** Every session's agent-child state and pid, for gauges: one query, nothing read per session. */
  sessionStates(): { readonly state: SessionChildState; readonly pid: number | null }[] {
    return this.parts.views.sessionStates();
  }

  events(sessionId: string, options: { after?: number; limit?: number } = {}): JournalEvent[] {
    this.parts.catalog.require(sessionId);
    return this.parts.store.events.read(sessionId, options);
  }

  /** Iterates a session's whole journal without loading it into memory. */
  replay(sessionId: string): IterableIterator<JournalEvent> {
    this.parts.catalog.require(sessionId);
    return this.parts.store.events.replay(sessionId);
  }

  /** Closes and deletes a session: its turn is interrupted, its child stopped, its journal removed. */
  async deleteSession(sessionId: string): Promise<void> {
    this.parts.catalog.require(sessionId);
    await deleteSession(this.parts, sessionId);
  }

  // ── holds, turns, subscriptions ──────────────────────────────────────

  /** Registers `holderId` on the session at once; `ticket.child` settles when its agent is ready. */
  hold(sessionId: string, holderId: string): HoldTicket<AgentChild> {
    this.assertRunning();
    this.parts.catalog.require(sessionId);
    return holdAndTell(this.parts.holds, sessionId, holderId, () => this.parts.sessionChanges.emit(sessionId));
  }

  /**
   * Runs a turn, or joins the running one (the agent gets the prompt at once; an `exclusive` prompt is refused instead);
   * `extra` (`_meta`, ...) goes to the agent as the client sent it, and its whole answer comes back. `options.files`: the
   * prompting client's own, which answer the agent's `fs/*` while the prompt runs (docs/api.md).
   */
  prompt(
    sessionId: string,
    prompt: ContentBlock[],
    extra: Omit<PromptRequest, "sessionId" | "prompt"> = {},
    options: PromptOptions = {},
  ): Promise<PromptResponse> {
    this.assertRunning();
    return this.parts.turns.prompt(sessionId, prompt, extra, options);
  }

  /**
   * What the session changed in its git directory against its base (docs/review.md): `HEAD` for a
   * plain directory (a session in a worktree of its own: `mergeBase(cwd, branch, baseCommit)`).
   */
  async changes(sessionId: string): Promise<ChangeSet> {
    const { cwd, base } = await changesBase(this.parts.catalog, sessionId);
    return readChanges(cwd, base);
  }

  /** One file of the session's changes: both texts and the patch, cut at the limit; a path not among them is refused. */
  async changedFile(sessionId: string, path: string): Promise<ChangedFileView> {
    const { cwd, base } = await changesBase(this.parts.catalog, sessionId);
    return readChangedFile(cwd, path, base);
  }

  /** The session's review comments, oldest first, sent or not (docs/review.md). */
  reviewComments(sessionId: string): ReviewComment[] {
    this.parts.catalog.require(sessionId);
    return this.review.list(sessionId);
  }

  /** A comment is on the changes: a file the agent did not change (or a mistyped path) is refused by name. */
  async addReviewComment(sessionId: string, comment: NewComment): Promise<ReviewComment> {
    this.assertRunning();
    const { cwd, base } = await changesBase(this.parts.catalog, sessionId);
    const path = await commentablePath(cwd, comment.path, comment.side, base);
    return this.review.add(sessionId, { ...comment, path });
  }

  /** Refused for a comment already sent: the agent was told it as it was. */
  editReviewComment(sessionId: string, commentId: string, body: string): Promise<ReviewComment> {
    this.assertRunning();
    this.parts.catalog.require(sessionId);
    return this.review.edit(sessionId, commentId, body);
  }

  deleteReviewComment(sessionId: string, commentId: string): Promise<void> {
    this.assertRunning();
    this.parts.catalog.require(sessionId);
    return this.review.delete(sessionId, commentId);
  }

  /** Every unsent comment to the agent as one prompt (a turn as any other); they are marked sent once it started. */
  sendReviewComments(sessionId: string): Promise<{ comments: ReviewComment[]; prompt: string }> {
    this.assertRunning();
    const session = this.parts.catalog.require(sessionId);
    const deps = {
      desk: this.review,
      log: this.parts.log,
      turnActive: (id: string) => this.parts.executions.isActive(id),
      subscribe: (id: string, listener: SessionListener) => this.subscribe(id, listener),
      promptAt: (id: string, seq: number) => {
        const [started] = this.events(id, { after: seq - 1, limit: 1 });
        const { prompt } = (started?.payload ?? {}) as { prompt?: { type: string; text?: string }[] };
        return prompt?.[0]?.type === "text" ? prompt[0].text : undefined;
      },
      // A turn begun while the comments' prompt was being written is not joined: the send is refused (turn_in_flight).
      prompt: (id: string, prompt: ContentBlock[]) => this.prompt(id, prompt, {}, { exclusive: true }),
    };
    return sendReviewComments(deps, sessionId, session.cwd);
  }

  /**
   * A request for the session's agent that Berth does not handle itself (a mode, a model, a config
   * option, an extension method): the session is held while it runs, so a stopped child comes
   * back; the answer and any error come back unchanged, and what it changed is kept. A mode or option
   * the agent changed without announcing it is announced to the session's other holders.
   */
  forward(sessionId: string, method: string, params: unknown, options: ForwardOptions = {}): Promise<unknown> {
    this.assertRunning();
    this.parts.catalog.require(sessionId);
    return forwardToAgent(this.parts, sessionId, method, params, options);
  }

  /** A notification for an agent outside any session: to its running child among `nearSessions`, else dropped. */
  notifyAgentOf(agentId: string, method: string, params: unknown, nearSessions: readonly string[]): boolean {
    return this.parts.outside.notify(agentId, method, params, nearSessions);
  }

  /** A notification for the session's agent (an extension): passed on if it has a child, else dropped. */
  notifyAgent(sessionId: string, method: string, params: unknown): boolean {
    return notifyAgent(this.parts, sessionId, method, params);
  }

  cancel(sessionId: string): Promise<boolean> {
    return this.parts.turns.cancel(sessionId);
  }

  subscribe(sessionId: string, listener: SessionListener): () => void {
    return this.parts.bus.subscribe(sessionId, listener);
  }

  /** A terminal's output as the agent would read it; undefined if its location is not loaded or it is gone. Never boots. */
  terminalOutput(sessionId: string, terminalId: string): TerminalOutputResult | undefined {
    return this.parts.views.terminalOutput(sessionId, terminalId);
  }

  // ── agents ───────────────────────────────────────────────────────────

  agents(): string[] {
    return this.parts.registry.ids();
  }

  /** Each agent's origin, installed version and login state. */
  agentSources(): AgentDetails[] {
    return withLoginStates(this.parts.registry.sources(), (agentId) => this.agentLoginState(agentId));
  }

  /** The agent registry's entries (read afresh), with the version of each installed here. */
  async agentCatalogue(): Promise<CatalogueView> {
    return catalogueView(await readAgentCatalogue(this.config), this.dataDir);
  }

  /** Starts installing an agent from the registry (docs/host.md, "The agent catalogue"); refusals are thrown before it starts. */
  startAgentInstall(request: InstallStart): Promise<{ id: string }> {
    this.assertRunning();
    return this.parts.installs.start(request);
  }

  /** Tells `follower` the install's events so far, then each as it comes; returns how to stop. */
  followAgentInstall(installId: string, follower: (event: InstallEvent) => void): () => void {
    return this.parts.installs.follow(installId, follower);
  }

  /** Removes an installed agent (a configured one of the same id stays). */
  removeInstalledAgent(agentId: string): void {
    this.assertRunning();
    this.parts.installs.remove(agentId);
  }

  /** The agent's own `initialize` answer (stored; a probe child only the first time). */
  agentProfile(agentId: string = this.parts.registry.defaultAgent): Promise<InitializeResponse> {
    this.assertRunning();
    return this.parts.outside.profile(agentId);
  }

  /** `authenticate` with the agent; remembered and replayed to every later child of that agent. */
  authenticate(agentId: string, request: AuthenticateRequest, asker: Asker = {}): Promise<unknown> {
    this.assertRunning();
    return this.parts.agentLogins.authenticate(agentId, request, asker);
  }

  /** The agent's auth methods, and its logins running or lately ended (docs/agent-login.md). */
  async agentLogins(agentId: string): Promise<{ methods: AuthMethodView[]; logins: AgentLoginView[] }> {
    this.assertRunning();
    return { methods: await this.parts.agentLogins.methods(agentId), logins: this.parts.agentLogins.list(agentId) };
  }

  /** An `authenticate` for a page or the CLI: answered once the agent opened an address or the login ended. */
  startAgentLogin(agentId: string, request: AuthenticateRequest, signal?: AbortSignal): Promise<AgentLoginView> {
    this.assertRunning();
    return this.parts.agentLogins.start(agentId, request, signal);
  }

  /** The address the person's browser ended on, handed to the agent's callback on this host's loopback. */
  deliverLoginCallback(agentId: string, loginId: string, address: string, signal?: AbortSignal): Promise<AgentLoginView> {
    this.assertRunning();
    return this.parts.agentLogins.deliver(agentId, loginId, address, signal);
  }

  /**
   * `logout` from the agent: passed to its running children (a child started for it when none runs), and the login
   * Berth replayed to new children is forgotten, in memory and in `agent-logins.json`.
   */
  logout(agentId: string, request: LogoutRequest = {}, asker: Asker = {}): Promise<unknown> {
    this.assertRunning();
    return this.parts.outside.logout(agentId, request, asker);
  }

  /** `logged-in` (Berth replays a login), `needs-login` (its last session/new or prompt wanted one), else `unknown`. */
  agentLoginState(agentId: string): AgentLoginStatus {
    return this.parts.outside.loginState(agentId);
  }

  /**
   * The agent's own sessions Berth does not know (ACP `session/list`, docs/api.md): one page of the agent's
   * `session/list`, time-bound; none when the agent cannot list them or its list failed (logged).
   */
  nativeSessions(agentId: string, request: { cwd?: string; cursor?: string }, asker: Asker = {}): Promise<NativePage> {
    this.assertRunning();
    return this.parts.natives.list(agentId, request, asker);
  }

  /**
   * Imports the agent's own session `sessionId` in `cwd` if the agent lists it there: a Berth session of the same id,
   * bound to that conversation, whose first load journals the history the agent replays. False if the agent does not.
   */
  async importNativeSession(agentId: string, sessionId: string, cwd: string, asker: Asker = {}): Promise<boolean> {
    this.assertRunning();
    // Another client's load importing it meanwhile: that import is the one, and its session the one opened.
    const importing = this.importing.get(sessionId);
    if (importing) return importing.then(() => false);
    const imported = this.importOnce(agentId, sessionId, cwd, asker);
    this.importing.set(sessionId, imported);
    const done = () => this.importing.delete(sessionId);
    imported.then(done, done);
    return imported;
  }

  private async importOnce(agentId: string, sessionId: string, cwd: string, asker: Asker): Promise<boolean> {
    const found = await this.parts.natives.find(agentId, sessionId, cwd, asker);
    if (!found) return false;
    // At the client's cwd, which the agent listed it for: the client reopens it there.
    await this.createSession({ cwd, agent: agentId, native: { sessionId, title: found.title ?? null } });
    this.parts.log.info({ sessionId, agent: agentId, cwd }, "imported an agent's own session");
    return true;
  }

  /** A request for an agent outside any session (an extension method). */
  askAgent(agentId: string, method: string, params: unknown, asker: Asker = {}, nearSessions: readonly string[] = []): Promise<unknown> {
    this.assertRunning();
    return this.parts.outside.ask(agentId, method, params, asker, nearSessions);
  }

  // ── questions ────────────────────────────────────────────────────────

  /** Every host's pending questions (of one session, if given), oldest first. */
  pendingQuestions(sessionId?: string): QuestionView[] {
    const own = this.parts.desk.pending(sessionId);
    const others = this.parts.peers
      .sessions()
      .filter((peer) => sessionId === undefined || peer.session.id === sessionId)
      .flatMap((peer) => peer.pendingQuestions.map(questionView));
    if (others.length === 0) return own;
    return own.concat(others).sort((a, b) => a.askedAt - b.askedAt || (a.id < b.id ? -1 : 1));
  }

  question(questionId: string): QuestionView | undefined {
    const own = this.parts.desk.get(questionId);
    if (own) return own;
    const other = this.parts.peers.question(questionId);
    return other && questionView(other);
  }

  /**
   * What the fleet's shared store says of a question, for one {@link question} does not show: another host's that this
   * host's view no longer has (resolved), or does not have yet. Undefined if there is none (always, on SQLite).
   */
  async storedQuestion(questionId: string): Promise<QuestionView | undefined> {
    const stored = await this.parts.peers.storedQuestion(questionId);
    return stored && questionView(stored);
  }

  /**
   * Settles once the answer is stored (then the agent has it), or fails after `writeTimeout` if the store cannot write.
   * Another host's question is refused ({@link OwnedByOtherHostError}): its agent waits on that host.
   */
  answerQuestion(questionId: string, answer: QuestionAnswer): Promise<QuestionView> {
    const other = this.parts.desk.get(questionId) ? undefined : this.parts.peers.question(questionId);
    if (other) {
      const peer = this.parts.peers.session(other.sessionId);
      return Promise.reject(peer ? refusalFor(peer, this.config.fleet.adopt) : new OwnedByOtherHostError(other.sessionId, null));
    }
    return this.parts.desk.answer(questionId, answer);
  }

  /** Whether sessions may have a sandbox here: bwrap's path, or why not and the fix (`GET /api/sandbox`, `berth status`). */
  sandboxAvailability(): SandboxAvailability {
    return this.parts.sandboxes.availability();
  }

  /** Whether the store writes (else since when and why), and how many writes wait: for `/healthz` and metrics. */
  storeHealth(): StoreHealthView {
    return this.parts.journal.health();
  }

  /** Whether this host's heartbeats reach the fleet's shared store (else since when and why); undefined on SQLite. */
  heartbeatHealth(): HeartbeatHealthView | undefined {
    return this.fleet?.heartbeats.view();
  }

  // ── locations, records, changes ──────────────────────────────────────

  /** Cached locations only: listing never boots one. */
  locations(): LocationView[] {
    return this.parts.views.locations();
  }

  /** Something about a session changed (holders, child, turn, questions): views should be re-read. */
  onSessionChanged(listener: (sessionId: string) => void): () => void {
    return this.parts.sessionChanges.add(listener);
  }

  /** A session's agent state (what `agentState` answers) changed and the change is committed: another client set a mode, the agent reported one. */
  onAgentStateChanged(listener: (sessionId: string) => void): () => void {
    return this.parts.journal.onAgentState(listener);
  }

  /** A piece of an agent's message is committed, so its session's `preview` may have changed: told per chunk, for the listener to coalesce. */
  /** Told a session's id when its agent may have changed files (a tool call finished, a file written, a turn ended). */
  onWorkDone(listener: (sessionId: string) => void): () => void {
    return this.parts.journal.onWorkDone(listener);
  }

  onAgentMessage(listener: (sessionId: string) => void): () => void {
    return this.parts.journal.onAgentMessage(listener);
  }

  onRecord(listener: (record: StampedRecord) => void): () => void {
    return this.parts.records.subscribe(listener);
  }

  /** Settles once every write queued so far is committed (or refused): records and events are seen only then. */
  committed(): Promise<void> {
    return this.parts.journal.committed();
  }

  /**
   * {@link committed}, waiting at most `writeTimeout` for a store that cannot write: then it fails with an error
   * `classifyError` calls `store_unavailable`, naming `what` and what becomes of it (`whatIfLate`).
   */
  committedWithin(what: string, whatIfLate: string): Promise<void> {
    return this.parts.journal.within(this.parts.journal.committed(), what, whatIfLate);
  }

  /** The newest `limit` records of every host of the fleet, oldest first. */
  recentRecords(limit = 100): StampedRecord[] {
    const own = this.parts.records.recent(limit);
    const others = this.parts.peers.records();
    if (others.length === 0) return own;
    const byId = new Map(own.map((stamped) => [stamped.id, stamped]));
    for (const row of others) if (!byId.has(row.id)) byId.set(row.id, stampedOf(row));
    return [...byId.values()].sort((a, b) => a.id - b.id).slice(-limit);
  }

  /** A record another host of the fleet appended (this host's own are told by {@link onRecord}). */
  onPeerRecord(listener: (record: StampedRecord) => void): () => void {
    return this.fleet?.directory.recorded.add((row) => listener(stampedOf(row))) ?? (() => undefined);
  }

  /** Another host's session is gone from the fleet (deleted), or became this host's own. */
  onPeerSessionGone(listener: (sessionId: string) => void): () => void {
    return this.fleet?.directory.gone.add(listener) ?? (() => undefined);
  }

  /** This host's id in its fleet; null on SQLite (one host). */
  get hostId(): string | null {
    return this.parts.hostId;
  }

  /**
   * The other host of the fleet that owns the session, as this host last read the shared store: where a
   * request for it would be relayed. Undefined for this host's own session, one no host owns, an unknown one, and on SQLite.
   */
  sessionOwner(sessionId: string): SessionOwner | undefined {
    const peer = this.parts.peers.session(sessionId);
    return peer?.owner ? { id: peer.owner.id, url: peer.owner.url, online: peer.ownerOnline } : undefined;
  }

  /**
   * Where the edge that follows each online peer's stream of its own sessions puts what it says (docs/fleet.md,
   * "One view"): the views show a peer's live state of a session while the fleet names that peer its online owner.
   */
  get peerLive(): PeerLiveSink {
    return this.parts.live;
  }

  /** The fleet's hosts (one joined or left, came back online or went offline, changed its URL or incarnation); never on SQLite. */
  onHostsChanged(listener: () => void): () => void {
    return this.fleet?.directory.hostsChanged.add(listener) ?? (() => undefined);
  }

  /**
   * Whether `path` (made canonical as a session's directory is) is a directory on this host: placement of a new session
   * in a fleet (docs/fleet.md). Never waits more than 2 s; throws `InvalidLocationError` for a path no session could have.
   */
  lookAtDirectory(path: string): Promise<DirectoryPresence> {
    return lookAtDirectory(canonicalDirectory(path));
  }

  /** The fleet's hosts; undefined on SQLite (one host, no fleet). */
  hosts(): HostView[] | undefined {
    const self = this.parts.hostId;
    return this.parts.peers.hosts()?.map((host) => ({
      id: host.id,
      url: host.url,
      incarnation: host.incarnation,
      registeredAt: host.registeredAt,
      heartbeatAt: host.heartbeatAt,
      online: host.alive,
      self: host.id === self,
    }));
  }

  /** The fleet's sessions and pending questions by owner host, for gauges; undefined on SQLite. Nothing is read per session. */
  fleetCounts(): FleetCounts | undefined {
    return this.parts.views.fleetCounts(this.hosts());
  }

  // ── lifecycle of the host itself ─────────────────────────────────────

  /** Waits for every location cleanup the sweeps started (tests, shutdown). */
  whenSettled(): Promise<void> {
    return this.parts.retention.whenSettled();
  }

  /**
   * Stops accepting work, interrupts running turns with reason `shutdown`, stops every
   * child and location service as a process group, runs `beforeClose` (the server closes its
   * clients), and closes the journal and the store. Every step runs; if some failed (each is
   * logged), it rejects with `ShutdownIncompleteError` naming them once all have run.
   */
  async shutdown(options: Omit<ShutdownOptions, "stopLogins"> = {}): Promise<void> {
    await this.parts.installs.close();
    try {
      await shutDown(this.parts, { ...options, stopLogins: () => this.logins.close() });
    } finally {
      await this.fleet?.close();
    }
  }

  private assertRunning(): void {
    if (this.parts.status.state !== "running") throw new HostStoppedError();
  }
}
