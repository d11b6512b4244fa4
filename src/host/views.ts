import type { SandboxView } from "../sandbox/sandboxes.js";

/** `GET /api/sandbox`: whether sessions may have a sandbox here. */
export type { SandboxAvailability } from "../sandbox/availability.js";
import type { SessionChildState } from "../lifecycle/session-holds.js";
import type { JournalEvent, MessagePreview, TurnOutcome } from "../store/events.js";
import type { SessionKey } from "../store/sessions.js";
import type { Worktree } from "../worktrees/worktree.js";

// The types of the host's API, for the protocol edges (which import nothing below the host).
export type { Clock, Timer } from "../lifecycle/clock.js";
export type { CleanupRegistration } from "../lifecycle/connection-cleanups.js";
export type { SessionChildState } from "../lifecycle/session-holds.js";
export type { DirectoryPresence } from "../location/directory-presence.js";
export type { QuestionAnswer } from "../location/question-types.js";
export type { TerminalOutputResult } from "../location/terminal.js";
export type { LoginAttachment, LoginRunner } from "../logins/login-runner.js";
export type { WindowSize } from "../logins/pty.js";
export type { JournalEvent } from "../store/events.js";
export type { HostRecord, StampedRecord } from "./host-records.js";
export type { WorktreeStatusView } from "./worktree-status.js";
export type { InstallEvent } from "./agent-installs.js";
export type { NewComment } from "./review-desk.js";
export type { SessionKey } from "../store/sessions.js";
export type { AgentRequest, ReopenRequest } from "./agent-request.js";
export type { AgentSessionState } from "./agent-session-state.js";
export type { RelayedRequest, RelayOutcome } from "./relayed-request.js";
export type { ClientFiles } from "../agents/agent-client-handlers.js";
export type { SessionEvent } from "./session-bus.js";
export type { WorktreeRequest } from "../worktrees/worktree-creation.js";

/** A journal event as a merged read serves it: `seqFrom` on an update standing for several (from `seqFrom` to `seq`). */
export type ReadEvent = JournalEvent & { readonly seqFrom?: number };

/** A session as operators and clients see it. */
export interface SessionView {
  readonly id: string;
  /** The fleet host that owns it (runs its agent); null on SQLite (one host), or while no host of the fleet owns it. */
  readonly host: string | null;
  /** Its owner host heartbeats (always true on SQLite): false shows "host offline", the session kept, not dropped. */
  readonly hostOnline: boolean;
  readonly agent: string;
  readonly cwd: string;
  readonly workspace: string | null;
  /** Its git worktree (docs/worktrees.md); null for a session in a plain directory. */
  readonly worktree: Worktree | null;
  readonly title: string | null;
  readonly state: SessionChildState;
  readonly pid: number | null;
  readonly holders: number;
  readonly turnActive: boolean;
  readonly turnStartedAt: number | null;
  readonly pendingQuestions: number;
  /** When the armed release clock fires, if the child is unheld. */
  readonly releaseAt: number | null;
  /** The end of the conversation for a list: the last agent message's last words, else the last prompt; null before any. */
  readonly preview: MessagePreview | null;
  /** Its sandbox (docs/sandbox.md): what its agent and terminals may write and cannot see; null when it has none. */
  readonly sandbox: SandboxView | null;
  /** How its last turn ended (or that its agent process exited after it); null before any turn and while one runs. */
  readonly lastTurn: TurnOutcome | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A page of a session list, newest first; `next` is where the next page starts, none after the last. */
export interface SessionPage {
  readonly sessions: SessionView[];
  readonly next?: SessionKey;
}

/**
 * What only a session's owner host knows of it, as that host shows it: its agent child, holders, turn, release clock
 * and last words. In a fleet with a cluster secret each host follows its online peers' own sessions' states
 * (docs/fleet.md, "One view").
 */
export type LiveSessionState = Pick<
  SessionView,
  "id" | "state" | "pid" | "holders" | "turnActive" | "turnStartedAt" | "releaseAt" | "preview" | "lastTurn"
>;

/** Where the edge following a peer's stream puts what that peer says of its own sessions' live states. */
export interface PeerLiveSink {
  /** Everything the peer shows now (its stream's first event): states it no longer names are dropped. */
  replace(peerId: string, states: readonly LiveSessionState[]): void;
  update(peerId: string, state: LiveSessionState): void;
  /** The session is no longer the peer's (deleted, lost, moved). */
  remove(peerId: string, sessionId: string): void;
  /** The peer's stream ended (or it went offline): none of its states is current any more. */
  forget(peerId: string): void;
}

type QuestionKind = "permission" | "elicitation";

export interface QuestionView {
  readonly id: string;
  readonly sessionId: string;
  readonly kind: QuestionKind;
  /** The agent's request: `{ toolCall, options }` for a permission, `{ message, requestedSchema }` for a form. */
  readonly request: unknown;
  readonly askedAt: number;
  readonly state: "pending" | "answered" | "cancelled" | "orphaned";
}

/** The host of the fleet that owns another host's session (the fleet's one view). */
export interface SessionOwner {
  readonly id: string;
  /** Where its peers reach it (`fleet.url`); null if it registered none. */
  readonly url: string | null;
  /** Its last heartbeat is within `fleet.hostTtl`. */
  readonly online: boolean;
}

/** A host of the fleet (`GET /api/hosts`). */
export interface HostView {
  readonly id: string;
  /** Where its peers reach it (`fleet.url`); null if it registered none. */
  readonly url: string | null;
  readonly incarnation: number;
  readonly registeredAt: number;
  readonly heartbeatAt: number;
  /** Its last heartbeat is within `fleet.hostTtl` (the database server's clock). */
  readonly online: boolean;
  /** The host answering the request. */
  readonly self: boolean;
}

/** The fleet's sessions and pending questions counted by owner host, for `/metrics`; read from memory and one query each. */
export interface FleetCounts {
  readonly hosts: readonly HostView[];
  /** By owner (null: no owner) and whether it heartbeats (this host's own too, as the fleet's view of its heartbeat says). */
  readonly sessions: ReadonlyArray<{ readonly host: string | null; readonly online: boolean; readonly count: number }>;
  /** Pending questions by their session's owner. */
  readonly questions: ReadonlyArray<{ readonly host: string | null; readonly count: number }>;
}

interface ServiceView {
  readonly name: string;
  readonly state: string;
  readonly pid: number | null;
  readonly port: number | null;
}

export interface LocationView {
  /** The host it is on (`--host-id`); null on SQLite. */
  readonly host: string | null;
  readonly directory: string;
  readonly workspace: string | null;
  /** `retained`, `interrupting` or `evicting` for a cached location. */
  readonly state: string;
  readonly activeAt: number;
  readonly expiresAt: number;
  readonly capAt: number;
  /** Why it is kept: `active-execution` while a turn runs, else `idle-ttl`. */
  readonly keptBy: "active-execution" | "idle-ttl";
  readonly sessions: readonly string[];
  readonly activeSessions: readonly string[];
  readonly services: readonly ServiceView[];
  readonly terminals: number;
  readonly pendingQuestions: number;
}

/**
 * Whether clients must log in to an agent before it works: `needs-login` (its last `session/new` or prompt was
 * refused with auth required, `-32000`, since the last login or logout), `logged-in` (Berth replays a login it
 * accepted), `unknown` (neither: it may need none, or keep its own login).
 */
export type AgentLoginStatus = "logged-in" | "needs-login" | "unknown";

// A session's changes and review comments (docs/review.md), as the edges show them.
export type { ChangeSet } from "../changes/change-set.js";
export type { ChangedFileView } from "../changes/changed-file.js";
export type { ReviewComment } from "../store/review-comments.js";
