// The server's own types are the source of truth; only types cross into the bundle.
export type { SessionView, QuestionView, LocationView, AgentSessionState, TerminalOutputResult } from "../../../src/host/views.js";
export type { StampedRecord, HostRecord } from "../../../src/host/host-records.js";
export type { ReadEvent } from "../../../src/server/chunk-merging.js";
import type { DeviceLoginView } from "../../../src/server/device-logins.js";

export type { AgentDetails, CatalogueView } from "../../../src/host/agent-catalogue.js";
export type { InstallEvent } from "../../../src/host/agent-installs.js";
import type { AgentDetails } from "../../../src/host/agent-catalogue.js";

export interface AgentsList {
  readonly agents: readonly string[];
  readonly default: string;
  /** Each agent's origin, installed version and login state. */
  readonly details: readonly AgentDetails[];
}

/** An agent's auth method; `type` "agent" (or absent in ACP): the agent runs its own login, often in a browser. */
export interface AuthMethod {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly type: string;
  /** An `env_var` method's variables. */
  readonly vars?: readonly string[];
}

/** A login Berth runs for an agent (`GET /api/agents/:id/logins`). */
export interface AgentLogin {
  readonly id: string;
  readonly agent: string;
  readonly methodId: string;
  readonly state: "starting" | "address_captured" | "callback_delivered" | "logged_in" | "failed";
  readonly address?: string;
  readonly error?: string;
  readonly startedAt: string;
}

export interface AgentLogins {
  readonly methods: readonly AuthMethod[];
  readonly logins: readonly AgentLogin[];
}

/** The REST answer to a question: a permission option, or a form action. */
export type QuestionAnswer =
  | { readonly optionId: string }
  | { readonly action: "accept"; readonly content: Record<string, unknown> }
  | { readonly action: "decline" };

/** A remembered device, as `GET /api/logins` lists it; `current` is the device asking. */
export type DeviceLogin = DeviceLoginView & { readonly current: boolean };

export type { ChangedFile, ChangeSet as SessionChanges, ChangeStatus } from "../../../src/changes/change-set.js";
export type { ChangedFileView } from "../../../src/changes/changed-file.js";

/** A review comment on a line of a session's changes; `sentAt` once it went to the agent. */
export interface ReviewComment {
  readonly id: string;
  readonly path: string;
  readonly line: number;
  readonly side: "new" | "old";
  readonly body: string;
  readonly createdAt: number;
  readonly sentAt: number | null;
}

export type NewReviewComment = Pick<ReviewComment, "path" | "line" | "side" | "body">;

/** A session's own git worktree (the session view's `worktree`), null for a session in a plain directory. */
export interface SessionWorktree {
  readonly repository: string;
  readonly path: string;
  readonly branch: string;
  readonly base: string;
  readonly baseCommit: string;
  readonly state: "active" | "landed" | "discarded";
  readonly landedCommit?: string;
}
