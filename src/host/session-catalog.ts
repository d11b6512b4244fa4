import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { InvalidLocationError, locationKey } from "../lifecycle/location-key.js";
import type { Session } from "../store/sessions.js";
import type { Worktree } from "../worktrees/worktree.js";
import type { AgentRegistry } from "../agents/agent-registry.js";
import type { Clock } from "../lifecycle/clock.js";
import type { Store } from "../store/store.js";
import { SessionNotFoundError } from "./agent-children.js";
import { agentRequestOf, type AgentRequest, type ReopenRequest } from "./agent-request.js";
import type { Journal } from "./journal.js";
import type { Peers } from "./fleet-directory.js";
import type { Sandboxes } from "../sandbox/sandboxes.js";
import { refusalFor, type OwnedByOtherHostError } from "./owned-elsewhere.js";

export interface NewSessionParams {
  readonly cwd: string;
  readonly agent?: string;
  readonly workspace?: string | null;
  /** What the creating client asked of the agent, passed on to every child of the session. */
  readonly agentRequest?: AgentRequest;
  /** The sandbox the client asked for (checked here); none: the configured one. */
  readonly sandbox?: unknown;
  /** Where the request came from, for errors: `_meta["berth/sandbox"]` or `sandbox`. */
  readonly sandboxWhere?: string;
  /** The agent's own conversation the session imports: its id is the session's id at Berth and at the agent. */
  readonly native?: { readonly sessionId: string; readonly title?: string | null };
}

export interface SessionCatalogDeps {
  readonly store: Store;
  /** Sessions this host lost to another host of its fleet: not found from the moment they are lost. */
  readonly lost: ReadonlySet<string>;
  /** The fleet's other hosts' sessions: shown here, but never changed, run or reopened here. */
  readonly peers: Peers;
  /** This host adopts an offline host's sessions (`fleet.adopt`): said in the refusal of a peer's session. */
  readonly adopt: boolean;
  readonly journal: Journal;
  readonly registry: AgentRegistry;
  readonly clock: Clock;
  readonly sandboxes: Sandboxes;
}

/** Stored sessions: created at a checked location with a known agent, found, reopened elsewhere only by mistake. */
export class SessionCatalog {
  constructor(private readonly deps: SessionCatalogDeps) {}

  /**
   * Stores a new session; settles with its id once it is stored, or fails after `writeTimeout` if
   * the store cannot write. Its agent is started by its first holder, not here.
   */
  async create(params: NewSessionParams, inWorktree?: { readonly id: string; readonly worktree: Worktree }): Promise<string> {
    const { journal, clock } = this.deps;
    const agent = this.agentOf(params);
    const key = locationKey(params.cwd, params.workspace);
    assertDirectory(key.directory);
    // Decided once and stored with the session: a restart, or a change of configuration, never unsandboxes it.
    const location = inWorktree?.worktree.repository ?? key.directory;
    const sandbox = this.deps.sandboxes.policyForNewSession(agent, location, params.sandbox, params.sandboxWhere ?? "sandbox");
    const { native } = params;
    const id = inWorktree?.id ?? native?.sessionId ?? randomUUID();
    const row = {
      id,
      agent,
      cwd: key.directory,
      workspace: key.workspace ?? null,
      ...(native ? { agentSessionId: native.sessionId, title: native.title ?? null } : {}),
      agentRequest: { ...params.agentRequest, sandbox, ...(native ? { nativeHistory: "unjournaled" as const } : {}) },
      worktree: inWorktree?.worktree ?? null,
      createdAt: clock.now(),
    };
    try {
      await journal.within(journal.call("sessions.create", [row], id), "the new session", "it was not created");
    } catch (error) {
      // The client is told it failed: once the store writes again, it must not appear after all.
      journal.queue("sessions.delete", [id]);
      throw error;
    }
    return id;
  }

  /** The agent the new session would get; throws `UnknownAgentError` naming one not configured. */
  agentOf(params: Pick<NewSessionParams, "agent">): string {
    const agent = params.agent ?? this.deps.registry.defaultAgent;
    this.deps.registry.resolve(agent);
    return agent;
  }

  /**
   * A client reopens the session (`session/load`, `session/resume`) at `cwd` — which must be the
   * session's — asking `reopen` of its agent: the next child that reopens it gets that request.
   */
  reopening(sessionId: string, cwd: string, reopen: ReopenRequest): void {
    const session = this.require(sessionId);
    const key = locationKey(cwd, session.workspace);
    if (key.directory !== session.cwd) {
      throw new InvalidLocationError(`session "${sessionId}" works in ${session.cwd}, not ${key.directory}: reopen it there`);
    }
    this.deps.journal.setSession(sessionId, { agentRequest: { ...agentRequestOf(session.agentRequest), reopen } });
  }

  /**
   * This host's stored session; throws {@link OwnedByOtherHostError} if another host of the fleet
   * owns it, {@link SessionNotFoundError} if there is none.
   */
  require(sessionId: string): Session {
    const session = this.deps.lost.has(sessionId) ? undefined : this.deps.store.sessions.get(sessionId);
    if (session) return session;
    const peer = this.deps.peers.session(sessionId);
    if (peer) throw refusalFor(peer, this.deps.adopt);
    throw new SessionNotFoundError(sessionId);
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
