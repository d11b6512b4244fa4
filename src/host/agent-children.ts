import { isDeepStrictEqual } from "node:util";
import { RequestError, type McpServer, type SessionNotification, type SessionUpdate } from "@agentclientprotocol/sdk";
import { AgentChild, AgentStartError } from "../agents/agent-child.js";
import { TurnBudget } from "../agents/turn-budget.js";
import type { AgentClientHandlers } from "../agents/agent-client-handlers.js";
import type { AgentRegistry } from "../agents/agent-registry.js";
import type { Clock } from "../lifecycle/clock.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import { FileAccessError } from "../location/file-access.js";
import type { LocationServices } from "../location/location-services.js";
import { elicitationResponse, permissionResponse } from "../agents/question-responses.js";
import { describeExit, type ProcessGroupLedger } from "../processes/index.js";
import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import type { Sandboxes } from "../sandbox/sandboxes.js";
import type { Session } from "../store/sessions.js";
import { agentSandboxPlan } from "./session-sandbox.js";
import type { Store } from "../store/store.js";
import type { AgentLoginStates } from "./agent-login-states.js";
import { withLoginEnv, type AgentLogins } from "./agent-logins.js";
import type { AgentProfiles } from "./agent-profiles.js";
import { agentRequestOf, mergedMcpServers, reopenFields, reopenRequest } from "./agent-request.js";
import { answerFields, changesState, restoreSteps, stateOf, withAnswer, withRequest, withUpdate } from "./agent-session-state.js";
import { agentTitled } from "./session-titles.js";
import { locationOf } from "./session-location.js";
import type { HostRecord, LogOnlyFields } from "./host-records.js";
import type { Journal } from "./journal.js";
import type { Backlog } from "./write-queue.js";
import type { Logger } from "./logger.js";
import type { QuestionDesk } from "./question-desk.js";
import type { EditorFiles } from "./editor-files.js";

export interface AgentChildrenDeps {
  readonly store: Store;
  readonly registry: AgentRegistry;
  readonly sandboxes: Sandboxes;
  readonly journal: Journal;
  readonly desk: QuestionDesk;
  /** Whether the prompting client or the disk answers the agent's `fs/*`. */
  readonly editorFiles: EditorFiles;
  readonly clock: Clock;
  readonly ledger: ProcessGroupLedger;
  readonly log: Logger;
  readonly record: (record: HostRecord, logOnly?: LogOnlyFields) => void;
  readonly initializeTimeoutMs: number;
  readonly stopTimeoutMs: number;
  /** Boots (or finds) the services of a location: acquiring a child is a real need. */
  readonly openLocation: (key: LocationKey) => Promise<LocationServices>;
  readonly peekLocation: (key: LocationKey) => LocationServices | undefined;
  /** The child died on its own. */
  readonly onChildLost: (sessionId: string, child: AgentChild) => void;
  /** The agent can neither load nor resume: its child must live as long as its location. */
  readonly onChildWithoutReload: (sessionId: string) => void;
  readonly profiles: AgentProfiles;
  readonly logins: AgentLogins;
  /** Told whether `session/new` was refused for want of a login. */
  readonly loginStates: AgentLoginStates;
  /** What the agent asks that Berth does not answer itself goes to the session's clients. */
  readonly relay: AgentRelay;
  /** The session's view changed (the agent titled it). */
  readonly sessionChanged: (sessionId: string) => void;
}

interface AgentRelay {
  request(sessionId: string, method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  notification(sessionId: string, method: string, params: unknown): void;
}

export type ChildStopReason = Extract<HostRecord, { kind: "child_released" }>["why"];

export class SessionNotFoundError extends Error {
  override readonly name = "SessionNotFoundError";
  constructor(readonly sessionId: string) {
    super(`no session "${sessionId}"`);
  }
}

/** Consecutive crashes within this window count towards the backoff. */
const CRASH_WINDOW_MS = 60_000;
/**
 * Lines of all agents' output handled in one turn of the event loop (about 15 ms of work at a streamed chunk's cost):
 * with many agents streaming, a turn stays short enough for everything else the host does (`agents/turn-budget.ts`).
 */
const OUTPUT_LINES_PER_TURN = 512;
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 30_000;

/**
 * Starts and stops the agent children of sessions. Acquisition is single-flight per session;
 * a child that keeps crashing is restarted with exponential backoff, never in a tight loop.
 */
export class AgentChildren {
  private readonly inflight = new Map<string, Promise<AgentChild>>();
  private readonly crashes = new Map<string, { count: number; lastAt: number }>();
  /** Every child started whose process group is not gone yet (one that died may leave some of it behind), for shutdown. */
  private readonly live = new Set<AgentChild>();
  /** Shared by every child's output. */
  private readonly turnBudget = new TurnBudget(OUTPUT_LINES_PER_TURN);
  /**
   * `running` → `stopping` (shutdown began: no new child starts) → `stopped` (every child's process group is gone and the
   * host's store is closing: what is still read from a child's pipe is dropped).
   */
  private state: "running" | "stopping" | "stopped" = "running";
  /** Whether agents' output is read (the journal's backlog): a child started while it is held starts held. */
  private output: Backlog = "flowing";

  constructor(private readonly deps: AgentChildrenDeps) {
    deps.journal.onBacklog((mode) => this.readOutput(mode));
  }

  acquire(sessionId: string): Promise<AgentChild> {
    if (this.state !== "running") return Promise.reject(new Error("the host is shutting down"));
    let acquisition = this.inflight.get(sessionId);
    if (!acquisition) {
      acquisition = this.start(sessionId);
      this.inflight.set(sessionId, acquisition);
      const done = () => {
        if (this.inflight.get(sessionId) === acquisition) this.inflight.delete(sessionId);
      };
      acquisition.then(done, done);
    }
    return acquisition;
  }

  /** Stops the child's process group and closes its terminals; recorded as `child_released` with why. */
  async stop(sessionId: string, child: AgentChild, why: ChildStopReason): Promise<void> {
    await child.stop(why);
    const session = this.deps.store.sessions.get(sessionId);
    if (session) await this.deps.peekLocation(locationOf(session))?.terminals.closeForSession(sessionId);
    this.deps.record({ kind: "child_released", sessionId, pid: child.pid, why });
  }

  /**
   * Host shutdown: no new child starts; every child still running is stopped as a group, once, and what a child that
   * died on its own left in its group is waited for: nothing of any child writes to the host's store after this.
   */
  async stopAll(): Promise<void> {
    this.state = "stopping";
    await Promise.allSettled([...this.inflight.values()]);
    await Promise.allSettled(
      [...this.live].map((child) => {
        // Died on its own, or already being stopped by Berth (the grace ended, an eviction): waited for, not stopped again.
        if (child.state !== "starting" && child.state !== "ready") return child.ended;
        this.deps.onChildLost(child.sessionId, child);
        return this.stop(child.sessionId, child, "shutdown");
      }),
    );
    this.state = "stopped";
  }

  /** Holds every agent's output while too much waits to be stored, and lets it flow again (the journal's backlog). */
  private readOutput(mode: Backlog): void {
    this.output = mode;
    for (const child of this.live) child.readOutput(mode);
  }

  /** Settles when the session's acquisition in flight (if any) has succeeded or failed. */
  async whenAcquired(sessionId: string): Promise<void> {
    await this.inflight.get(sessionId)?.catch(() => undefined);
  }

  /** The session is gone: forget its crash history. */
  forget(sessionId: string): void {
    this.crashes.delete(sessionId);
  }

  /** Seconds of backoff before the next start, after repeated crashes. */
  backoffMs(sessionId: string): number {
    const crashes = this.crashes.get(sessionId);
    if (!crashes || this.deps.clock.now() - crashes.lastAt > CRASH_WINDOW_MS || crashes.count < 2) return 0;
    return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (crashes.count - 2));
  }

  private async start(sessionId: string): Promise<AgentChild> {
    const { store, registry, clock, record } = this.deps;
    const session = store.sessions.get(sessionId);
    if (!session) throw new SessionNotFoundError(sessionId);
    const wait = this.backoffMs(sessionId);
    if (wait > 0) await new Promise<void>((resolve) => clock.setTimeout(resolve, wait));

    const key = locationOf(session);
    const startedAt = clock.now();
    const located = await this.deps.openLocation(key);
    // A service that exited since the location booted is started again before an agent is told of it.
    await located.services.ensureStarted();
    const request = agentRequestOf(session.agentRequest);
    const login = this.deps.logins.get(session.agent);
    const command = withLoginEnv(registry.resolve(session.agent), login);
    // Throws when the session's sandbox cannot run here: never started without it.
    const sandbox = agentSandboxPlan(this.deps.sandboxes, session, command.command);
    const child = await AgentChild.start({
      agentId: session.agent,
      sessionId,
      command,
      cwd: key.directory,
      sandbox,
      handlers: this.handlersFor(sessionId, key, located, sandbox),
      initializeTimeoutMs: this.deps.initializeTimeoutMs,
      stopTimeoutMs: this.deps.stopTimeoutMs,
      ledger: this.deps.ledger,
      onStderrLine: (line) => this.deps.log.info({ sessionId, agent: session.agent, stderr: line }, "agent stderr"),
      clientInfo: request.clientInfo,
      initializeMeta: request.initializeMeta,
      authenticate: login?.request,
      turnBudget: this.turnBudget,
    });
    try {
      this.deps.profiles.remember(session.agent, child.initializeResponse);
      await this.openAgentSession(child, session, key, located);
      // The services the agent was given must still be the location's: never run against closed ones.
      if (this.deps.peekLocation(key) !== located) throw new Error("its location was evicted while the agent started; try again");
      if (!this.deps.store.sessions.get(sessionId)) throw new SessionNotFoundError(sessionId);
    } catch (error) {
      await child.stop();
      throw error;
    }
    this.live.add(child);
    child.readOutput(this.output);
    void child.ended.then(() => this.live.delete(child));
    child.onExit((status) => this.childExited(sessionId, key, child, describeExit(status)));
    if (!child.canLoad && !child.canResume) this.deps.onChildWithoutReload(sessionId);
    record({ kind: "child_acquired", sessionId, agent: session.agent, pid: child.pid, ms: clock.now() - startedAt });
    return child;
  }

  /**
   * `session/load` or `session/resume` when the agent already has this conversation, else
   * `session/new` as the client asked it; then the mode, model and options the session had are
   * set again on the new child.
   */
  private async openAgentSession(child: AgentChild, session: Session, key: LocationKey, located: LocationServices): Promise<void> {
    const request = agentRequestOf(session.agentRequest);
    const cwd = key.directory;
    const services = child.supportsHttpMcp ? located.services.mcpServers() : [];
    const agentSessionId = session.agentSessionId;
    let answer: unknown;
    /** Why the agent could not reopen a conversation that has turns, if it could not. */
    let forgotten: string | undefined;
    if (agentSessionId && request.nativeHistory === "unjournaled") {
      // An imported conversation exists only at the agent: it is loaded or the reopening fails, never started afresh.
      answer = await this.importHistory(child, session, agentSessionId, cwd, services);
    } else if (agentSessionId && (child.canLoad || child.canResume)) {
      const reopen = reopenRequest(request);
      const params = { sessionId: agentSessionId, cwd, mcpServers: mergedMcpServers(reopen.mcpServers, services), ...reopenFields(reopen) };
      try {
        answer = child.canLoad ? await child.loadSession(params) : await child.resumeSession(params);
      } catch (error) {
        // An agent that never answered would not answer session/new either: the start fails.
        if (error instanceof AgentStartError) throw error;
        // Nothing was said yet (agents keep no conversation before its first prompt): start it afresh, silently.
        if (await this.hasTurns(session.id)) {
          // Gemini cannot reload a conversation its ended process did not finish: the journal keeps the history, the
          // agent starts afresh, and the user is told it will not remember (once the new conversation exists).
          forgotten = reasonOf(error);
          this.deps.log.warn({ sessionId: session.id, err: error }, "agent could not reopen a session; started a fresh conversation");
        } else this.deps.log.info({ sessionId: session.id, err: error }, "agent could not reopen a session without turns; created it again");
      }
    } else if (agentSessionId) {
      this.deps.journal.notice(session.id, key, "Berth: this agent can neither load nor resume sessions; it starts a fresh conversation.", {
        kind: "conversation_restarted",
      });
    }
    if (answer === undefined) {
      const response = await this.deps.loginStates.observe(
        child.agentId,
        child.newSession({ ...request.newSession, cwd, mcpServers: mergedMcpServers(request.newSession?.mcpServers, services) }),
      );
      this.deps.journal.setSession(session.id, { agentSessionId: response.sessionId });
      answer = response;
      if (forgotten !== undefined)
        this.deps.journal.notice(
          session.id,
          key,
          `Berth: the agent could not reopen this session (${forgotten}); it starts a fresh conversation and does not remember what was said above.`,
          // The agent's old conversation id, for whoever can still recover it (the agent's own files keep it).
          { kind: "conversation_restarted", reason: forgotten, previousAgentSessionId: agentSessionId },
        );
    }
    let fresh = withAnswer({}, answer);
    for (const step of restoreSteps(stateOf(session.agentState), fresh, session.id)) {
      try {
        const answered = await child.request(step.method, step.params, AbortSignal.timeout(this.deps.initializeTimeoutMs));
        fresh = withRequest(fresh, step.method, step.params, answered) ?? fresh;
      } catch (error) {
        this.deps.log.warn({ sessionId: session.id, method: step.method, err: error }, "could not restore the session's choice on a new agent child");
      }
    }
    // Re-read: updates (available commands) may have been stored while the session opened.
    const current = stateOf(this.deps.store.sessions.get(session.id)?.agentState ?? null);
    this.deps.journal.setSession(session.id, { agentState: { ...current, ...answerFields(fresh) } });
  }

  /** `session/load` of a conversation Berth imported from the agent: the history it replays is journaled, once. */
  private async importHistory(
    child: AgentChild,
    session: Session,
    agentSessionId: string,
    cwd: string,
    services: readonly McpServer[],
  ): Promise<unknown> {
    const { nativeHistory: _unjournaled, ...request } = agentRequestOf(session.agentRequest);
    if (!child.canLoad) throw new Error(`agent "${session.agent}" cannot load sessions: its conversation "${agentSessionId}" cannot be imported`);
    const reopen = reopenRequest(request);
    const params = { sessionId: agentSessionId, cwd, mcpServers: mergedMcpServers(reopen.mcpServers, services), ...reopenFields(reopen) };
    const answer = await child.loadSession(params, "new");
    this.deps.journal.setSession(session.id, { agentRequest: request });
    return answer;
  }

  private async hasTurns(sessionId: string): Promise<boolean> {
    // A turn queued before this acquisition counts: wait (without blocking) until it is stored.
    await this.deps.journal.committed();
    for (const event of this.deps.store.events.replay(sessionId)) if (event.kind === "turn_started") return true;
    return false;
  }

  private childExited(sessionId: string, key: LocationKey, child: AgentChild, exit: string): void {
    try {
      this.recordExit(sessionId, key, child, exit);
    } catch (error) {
      this.deps.log.error({ err: error, sessionId }, "handling an exited agent failed");
    }
  }

  private recordExit(sessionId: string, key: LocationKey, child: AgentChild, exit: string): void {
    const previous = this.crashes.get(sessionId);
    const now = this.deps.clock.now();
    const count = previous && now - previous.lastAt <= CRASH_WINDOW_MS ? previous.count + 1 : 1;
    this.crashes.set(sessionId, { count, lastAt: now });
    const stderr = child.stderrTail();
    this.deps.journal.append(sessionId, key, "agent_exited", { pid: child.pid, exit, stderr });
    this.deps.journal.notice(sessionId, key, `Berth: the agent process exited unexpectedly (${exit}).`, { kind: "agent_exited", exit });
    this.deps.record({ kind: "child_exited", sessionId, agent: child.agentId, pid: child.pid, exit }, { stderr });
    this.deps
      .peekLocation(key)
      ?.terminals.closeForSession(sessionId)
      .catch((error: unknown) => this.deps.log.error({ err: error, sessionId }, "releasing the terminals of an exited agent failed"));
    this.deps.onChildLost(sessionId, child);
  }

  /**
   * Keeps the session's state (current mode, options, commands) as its updates announce it. Only those few kinds read the
   * stored session: a streaming reply's chunks, nearly every update, cost no SQLite read and no JSON parse.
   */
  private track(sessionId: string, update: SessionUpdate): void {
    if (update.sessionUpdate === "session_info_update") return this.titled(sessionId, update);
    if (!changesState(update)) return;
    const session = this.deps.store.sessions.get(sessionId);
    if (session) this.deps.journal.setSession(sessionId, { agentState: withUpdate(stateOf(session.agentState), update) });
  }

  /**
   * For one child of the session: whether an `available_commands_update` says what the session's commands already are
   * (every new process announces them again; journaling each copy grew every cold load's history by kilobytes).
   * The first is compared with the stored state, written long before this child started; later ones with the last.
   */
  private repeatedCommands(sessionId: string): (notification: SessionNotification) => boolean {
    let last: unknown;
    let known = false;
    return ({ update, _meta }) => {
      if (update.sessionUpdate !== "available_commands_update") return false;
      if (!known) last = stateOf(this.deps.store.sessions.get(sessionId)?.agentState ?? null).availableCommands;
      const repeated = _meta == null && update._meta == null && isDeepStrictEqual(last, update.availableCommands);
      last = update.availableCommands;
      known = true;
      return repeated;
    };
  }

  /** The agent named its session: the title shown, unless a person named it (session-titles.ts). */
  private titled(sessionId: string, update: SessionUpdate): void {
    const session = this.deps.store.sessions.get(sessionId);
    const titled = session && agentTitled(stateOf(session.agentState), update);
    if (!titled) return;
    this.deps.journal.setSession(sessionId, { agentState: titled.agentState });
    if (titled.retitle === null || titled.retitle === session.title) return;
    this.deps.journal.renameSession(sessionId, titled.retitle);
    this.deps.sessionChanged(sessionId);
  }

  /** The agent's own session id in what it sends becomes Berth's, the only one clients know. */
  private berthIds(sessionId: string, params: unknown): unknown {
    const agentSessionId = this.deps.store.sessions.get(sessionId)?.agentSessionId;
    if (typeof params !== "object" || params === null || !("sessionId" in params) || params.sessionId !== agentSessionId) return params;
    return { ...params, sessionId };
  }

  private handlersFor(sessionId: string, key: LocationKey, located: LocationServices, sandbox: SandboxPlan | undefined): AgentClientHandlers {
    const { journal, desk, editorFiles } = this.deps;
    const repeatedCommands = this.repeatedCommands(sessionId);
    return {
      sessionUpdate: (notification, line) => {
        // Read from a pipe after every child's group is gone (written before): the store is closing, nothing keeps it.
        if (this.state === "stopped") return;
        if (repeatedCommands(notification)) return;
        journal.update(sessionId, key, notification.update, notification._meta, line);
        this.track(sessionId, notification.update);
      },
      relayRequest: (method, params, signal) => this.deps.relay.request(sessionId, method, this.berthIds(sessionId, params), signal),
      relayNotification: (method, params) => this.deps.relay.notification(sessionId, method, this.berthIds(sessionId, params)),
      requestPermission: async (params, signal) => {
        // Questions carry Berth's session id; the agent's own id means nothing to clients.
        return permissionResponse(await desk.ask(sessionId, key, located, { kind: "permission", request: { ...params, sessionId } }, signal));
      },
      createElicitation: async (params, signal) => {
        // Berth advertises form elicitations only: a URL to open is not put before a person.
        if ((params as { mode?: unknown }).mode !== "form") {
          const mode = String((params as { mode?: unknown }).mode);
          throw RequestError.invalidParams(
            { mode, supported: ["form"] },
            `Berth supports form elicitations only (clientCapabilities.elicitation.form), not mode "${mode}"`,
          );
        }
        return elicitationResponse(
          await desk.ask(sessionId, key, located, { kind: "elicitation", request: { ...params, sessionId } as typeof params }, signal),
        );
      },
      // A client asked carries Berth's session id; the disk is asked with the agent's own request.
      readTextFile: (params, prompter) =>
        editorFiles.read(sessionId, prompter, this.berthIds(sessionId, params) as typeof params, {
          confine: () => fileCall(() => located.files.checkConfined(params.path)),
          disk: () => fileCall(() => located.files.readTextFile(params)),
        }),
      writeTextFile: async (params, prompter) => {
        const answer = await editorFiles.write(sessionId, prompter, this.berthIds(sessionId, params) as typeof params, {
          confine: () => fileCall(() => located.files.checkConfined(params.path)),
          disk: async () => {
            await fileCall(() => located.files.writeTextFile(params));
            return {};
          },
        });
        // Whoever wrote it, the session's changes are read again.
        this.deps.journal.tellWorkDone(sessionId);
        return answer;
      },
      createTerminal: async (params) => ({
        terminalId: await located.terminals.create({ ...params, sessionId, sandbox }),
      }),
      terminalOutput: async (params) => located.terminals.output(params.terminalId, sessionId),
      waitForTerminalExit: (params) => located.terminals.waitForExit(params.terminalId, sessionId),
      killTerminal: async (params) => {
        await located.terminals.stop(params.terminalId, sessionId);
        return {};
      },
      releaseTerminal: async (params) => {
        await located.terminals.close(params.terminalId, sessionId);
        return {};
      },
    };
  }
}

/** Why the agent could not reopen a conversation, as its error says. */
function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** File access refusals reach the agent as invalid params, naming the path and why. */
async function fileCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof FileAccessError) throw RequestError.invalidParams({ code: error.code }, error.message);
    throw error;
  }
}
