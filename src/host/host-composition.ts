import type { AgentChild } from "../agents/agent-child.js";
import { AgentRegistry } from "../agents/agent-registry.js";
import { InstalledListError, installPaths, readInstalledAgents } from "../agents/installed-agents.js";
import { AgentInstalls } from "./agent-installs.js";
import type { Config } from "../config/config-schema.js";
import { dataPaths } from "../config/paths.js";
import type { Clock } from "../lifecycle/clock.js";
import { ConnectionCleanups } from "../lifecycle/connection-cleanups.js";
import { Executions } from "../lifecycle/executions.js";
import { Listeners } from "../lifecycle/listeners.js";
import type { LocationKey } from "../lifecycle/location-key.js";
import { LocationRetention } from "../lifecycle/location-retention.js";
import { LocationServicesCache } from "../lifecycle/location-services-cache.js";
import { SessionHolds } from "../lifecycle/session-holds.js";
import { bootLocationServices, type LocationServices } from "../location/location-services.js";
import type { ProcessGroupLedger } from "../processes/index.js";
import type { HostStore } from "../store/host-store.js";
import type { Store } from "../store/store.js";
import { AgentChildren, SessionNotFoundError } from "./agent-children.js";
import { AgentLoginStates } from "./agent-login-states.js";
import { AgentLogins } from "./agent-logins.js";
import { AgentProfiles } from "./agent-profiles.js";
import { noticeAgentStopped, type AgentStopReason } from "./agent-stop-notice.js";
import { AgentsOutsideSessions } from "./agents-outside-sessions.js";
import { AgentLoginDesk } from "./agent-login-desk.js";
import { clientHolders, LOCATION_HOLDER } from "./holders.js";
import { HostRecordLog, type HostRecord, type LogOnlyFields } from "./host-records.js";
import { HostViews } from "./host-views.js";
import { noPeers, type Peers } from "./fleet-directory.js";
import { Housekeeping } from "./housekeeping.js";
import { Journal } from "./journal.js";
import { PeerLiveViews } from "./peer-live-views.js";
import { closeLocation } from "./location-closing.js";
import type { Logger } from "./logger.js";
import { QuestionDesk } from "./question-desk.js";
import { EditorFiles } from "./editor-files.js";
import { RelayedRequest } from "./relayed-request.js";
import { SessionBus } from "./session-bus.js";
import { SessionCatalog } from "./session-catalog.js";
import { locationOfSession, sessionsAt } from "./session-location.js";
import { TransientChildren } from "./transient-child.js";
import { NativeSessions } from "./native-sessions.js";
import { sandboxPolicyOf } from "./session-sandbox.js";
import { Sandboxes } from "../sandbox/sandboxes.js";
import { strictestPolicy } from "../sandbox/policy.js";
import { Turns } from "./turns.js";

/** The host's own states: `running` → `stopping` (it admits no new work) → `stopped` (its store is closed). */
type HostState = "running" | "stopping" | "stopped";

/** Every part of a host, wired together. */
export interface HostParts {
  readonly config: Config;
  readonly dataDir: string;
  readonly store: Store;
  readonly clock: Clock;
  readonly log: Logger;
  readonly status: { state: HostState };
  readonly journal: Journal;
  readonly records: HostRecordLog;
  readonly bus: SessionBus;
  /**
   * Sessions this host lost to another host of its fleet (PostgreSQL; always empty on SQLite): from the moment
   * one is lost it is not found, not shown, and no agent is started for it, however long its mirror takes to forget it.
   */
  readonly lost: Set<string>;
  /** The fleet's other hosts' sessions, questions and records (nothing on SQLite). */
  readonly peers: Peers;
  /** What the peers stream of their own sessions' live states (nothing without a cluster secret, and on SQLite). */
  readonly live: PeerLiveViews;
  /** This host's id in its fleet; null on SQLite. */
  readonly hostId: string | null;
  /** Something about a session changed (holders, child, turn, questions): views should be re-read. */
  readonly sessionChanges: Listeners<string>;
  readonly connections: ConnectionCleanups;
  readonly ledger: ProcessGroupLedger;
  readonly housekeeping: Housekeeping;
  readonly registry: AgentRegistry;
  readonly sandboxes: Sandboxes;
  readonly installs: AgentInstalls;
  readonly catalog: SessionCatalog;
  readonly transient: TransientChildren;
  readonly outside: AgentsOutsideSessions;
  readonly natives: NativeSessions;
  readonly agentLogins: AgentLoginDesk;
  readonly executions: Executions;
  readonly cache: LocationServicesCache<LocationServices>;
  readonly retention: LocationRetention<LocationServices>;
  readonly desk: QuestionDesk;
  readonly children: AgentChildren;
  readonly holds: SessionHolds<AgentChild>;
  readonly turns: Turns;
  readonly views: HostViews;
  readonly noticeAgentStopped: (sessionId: string, reason: AgentStopReason) => void;
}

/** A host in a fleet: its id, and what it knows of the other hosts (its writer and reads are its {@link HostStore}). */
export interface FleetMembership {
  readonly hostId: string;
  readonly peers: Peers;
}

/** Builds the parts of a host on an open store and wires them together; nothing starts running yet. */
export function composeHost(
  config: Config,
  dataDir: string,
  hostStore: HostStore,
  clock: Clock,
  log: Logger,
  fleet: FleetMembership | undefined,
  configFile?: string,
): HostParts {
  const store = hostStore.reads;
  const peers = fleet?.peers ?? noPeers;
  const hostId = fleet?.hostId ?? null;
  const status: { state: HostState } = { state: "running" };
  const lost = new Set<string>();
  const paths = dataPaths(dataDir);
  const sessionChanges = new Listeners<string>((error) => log.error({ err: error }, "session change listener failed"));
  const bus = new SessionBus((sessionId, error) => log.error({ err: error, sessionId }, "session subscriber failed and was dropped"));
  // The host's one writer: every write below goes through it, queued; the event loop never waits on the database.
  const journal = new Journal(hostStore, bus, (key) => retention.touch(key), clock, log, config.writeTimeout, config.writeBacklogLimit);
  const records = new HostRecordLog({ store, journal, clock, log, sessionChanged: (sessionId) => sessionChanges.emit(sessionId) });
  const record = (r: HostRecord, logOnly?: LogOnlyFields) => records.record(r, logOnly);
  const keyOf = (sessionId: string) => locationOfSession(store, sessionId);
  const housekeeping = new Housekeeping({
    clock,
    log,
    terminalOutputDir: paths.terminalOutput,
    outputRetentionMs: config.outputRetention,
    pruneRecordsBefore: (at) => journal.call("lifecycleRecords.pruneBefore", [at]),
    recordRetentionMs: config.recordRetention,
  });
  const ledger: ProcessGroupLedger = {
    // Queued: a host killed before it is stored leaves a group the next start still finds by its marker.
    add: (group) => journal.queue("processGroups.add", [group]),
    // A crashed child's group may finish stopping after shutdown closed the store: what it would
    // have deleted is found gone and deleted by the next start's reaping.
    delete: (pgid) => {
      if (status.state !== "stopped") journal.queue("processGroups.delete", [pgid]);
    },
    list: () => store.processGroups.list(),
  };
  const connections = new ConnectionCleanups((error, id) => log.error({ err: error, cleanup: id }, "connection cleanup failed"));
  // A damaged list of installed agents is logged and read as none: the host runs its other agents.
  const installed = () => {
    try {
      return readInstalledAgents(dataDir);
    } catch (error) {
      if (!(error instanceof InstalledListError)) throw error;
      log.error({ err: error }, "installed agents unreadable; only the configured agents are available");
      return {};
    }
  };
  const registry = new AgentRegistry(config.agents, config.defaultAgent, paths.agentState, installed());
  const sandboxes = new Sandboxes({
    config: config.sandbox,
    agents: config.agents,
    dataDir,
    agentStateDir: paths.agentState,
    installedAgentsDir: installPaths(dataDir).agents,
    configFile,
  });
  // An install or removal made here changes the agents at once: the next child of each starts from the list.
  const installs = new AgentInstalls(config, dataDir, () => registry.setInstalled(installed()), log);
  const logins = new AgentLogins(config.rememberLogins === "file" ? dataPaths(dataDir).agentLogins : undefined, (error) =>
    log.error({ err: error }, "agent logins file unreadable; clients log in again"),
  );
  const loginStates = new AgentLoginStates(logins);
  const transient = new TransientChildren({
    registry,
    ledger,
    log,
    cwd: paths.agentState,
    initializeTimeoutMs: config.initializeTimeout,
    stopTimeoutMs: config.stopTimeout,
    initialized: (agentId, child) => profiles.remember(agentId, child.initializeResponse),
    record,
  });
  const profiles = new AgentProfiles(
    store,
    registry,
    clock,
    (agentId) =>
      transient.run(agentId, async (child) => child.initializeResponse, {
        purpose: "initialize",
        method: "initialize",
        replayLogin: false,
      }),
    (profile) => journal.queue("agentProfiles.put", [profile]),
  );
  const outside = new AgentsOutsideSessions({
    registry,
    profiles,
    logins,
    transient,
    states: loginStates,
    childOf: (sessionId) => holds.child(sessionId),
    liveChildren: () => holds.liveChildren(),
  });
  const natives = new NativeSessions({ outside, store, log });
  const agentLogins = new AgentLoginDesk({ outside, dataDir, clock, log });
  const executions = new Executions(clock, record);
  const notice = (sessionId: string, reason: AgentStopReason) => noticeAgentStopped({ config, store, journal, holds, log }, sessionId, reason);
  const cache = new LocationServicesCache<LocationServices>({
    boot: (key) =>
      bootLocationServices(key, {
        services: config.services,
        terminalOutputDir: paths.terminalOutput,
        terminalOutputLimit: config.terminalOutputLimit,
        stopTimeoutMs: config.stopTimeout,
        ledger,
        log: (line, fields) => log.info({ ...fields, directory: key.directory, workspace: key.workspace }, line),
        // Sandboxed as soon as one of the location's sessions is: the services serve them all.
        sandbox: () =>
          sandboxes.servicePlan(strictestPolicy(sessionsAt(store, key).map((session) => sandboxPolicyOf(sandboxes, session))), key.directory),
      }),
    close: (key, located, reason) => closeLocation({ store, holds, children, noticeAgentStopped: notice }, key, located, reason),
  });
  const retention = new LocationRetention<LocationServices>({
    clock,
    executions,
    cache,
    idleTtlMs: config.idleTtl,
    maxActiveHoldMs: config.maxActiveHold,
    sweepIntervalMs: config.sweepInterval,
    cancelPendingQuestions: (key) => {
      for (const session of sessionsAt(store, key)) desk.cancelForSession(session.id, "inactivity");
    },
    record,
    onError: (error, key) => log.error({ err: error, directory: key.directory, workspace: key.workspace }, "location cleanup step failed"),
    // evictHeld off (the default): a location a client still holds a session of is kept, up to the cap.
    ...(config.evictHeld ? {} : { isHeld: (key: LocationKey) => sessionsAt(store, key).some((session) => clientHolders(holds, session.id) > 0) }),
  });
  const desk = new QuestionDesk({
    store,
    journal,
    bus,
    clock,
    record,
    peekLocation: (sessionId) => {
      const key = keyOf(sessionId);
      return key && retention.peek(key);
    },
    keyOf,
  });
  const editorFiles = new EditorFiles({ clock, record, timeoutMs: config.clientFileTimeout });
  const children = new AgentChildren({
    store,
    registry,
    sandboxes,
    journal,
    desk,
    editorFiles,
    clock,
    ledger,
    log,
    record,
    initializeTimeoutMs: config.initializeTimeout,
    stopTimeoutMs: config.stopTimeout,
    openLocation: (key) => retention.open(key),
    peekLocation: (key) => retention.peek(key),
    onChildLost: (sessionId, child) => holds.childLost(sessionId, child),
    onChildWithoutReload: (sessionId) => void holds.hold(sessionId, LOCATION_HOLDER),
    profiles,
    logins,
    sessionChanged: (sessionId) => sessionChanges.emit(sessionId),
    loginStates,
    relay: {
      // After the updates the agent sent before: clients see its messages in its order.
      request: (sessionId, method, params, signal) => {
        const request = new RelayedRequest(method, params, signal);
        journal.afterCommit(() => {
          bus.publish(sessionId, { type: "agent_request", request });
          request.seal();
        });
        return request.answer;
      },
      notification: (sessionId, method, params) => journal.afterCommit(() => bus.publish(sessionId, { type: "agent_notification", method, params })),
    },
  });
  const holds: SessionHolds<AgentChild> = new SessionHolds<AgentChild>({
    clock,
    releaseGraceMs: config.releaseGrace,
    acquire: (sessionId) => {
      // A real need at the location: until the agent is up, the location is not evicted under it (L4's re-check sees it).
      // Lost to another host of the fleet: its agent runs there now.
      if (lost.has(sessionId)) return Promise.reject(new SessionNotFoundError(sessionId));
      const key = keyOf(sessionId);
      const need = key && retention.beginNeed(key);
      return children.acquire(sessionId).then(
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
    stop: (sessionId, child) => children.stop(sessionId, child, "grace"),
    turns: executions,
    onError: (error, sessionId) => log.error({ err: error, sessionId }, "agent child release failed"),
  });
  const turns = new Turns({
    store,
    holds,
    executions,
    journal,
    bus,
    desk,
    clock,
    record,
    interruptTimeoutMs: config.interruptTimeout,
    maxActiveHoldMs: config.maxActiveHold,
    loginStates,
    onError: (error, sessionId, failed) =>
      log.error(
        { err: error, sessionId },
        failed === "stop_unresponsive"
          ? "stopping an unresponsive agent failed"
          : "a prompt's answer that came before its turn could not be journaled",
      ),
    stopUnresponsive: async (sessionId, child) => {
      notice(sessionId, "unresponsive");
      holds.childLost(sessionId, child);
      await children.stop(sessionId, child, "unresponsive");
    },
  });
  // A peer's live state of its session changed: the views read it again (the event stream's `session`), as for its own.
  const live = new PeerLiveViews((sessionId) => sessionChanges.emit(sessionId));
  const views = new HostViews({ store, lost, hostId, peers, live, journal, holds, executions, retention, cache, sandboxes, registry });
  const catalog = new SessionCatalog({ store, lost, peers, adopt: config.fleet.adopt, journal, registry, clock, sandboxes });
  return {
    config,
    dataDir,
    store,
    clock,
    log,
    status,
    journal,
    records,
    bus,
    lost,
    peers,
    live,
    hostId,
    sessionChanges,
    connections,
    ledger,
    housekeeping,
    registry,
    sandboxes,
    installs,
    catalog,
    transient,
    outside,
    natives,
    agentLogins,
    executions,
    cache,
    retention,
    desk,
    children,
    holds,
    turns,
    views,
    noticeAgentStopped: notice,
  };
}
