// The server's own types are the source of truth; only types cross into the bundle.
import type { SessionView } from "../../../src/host/views.js";
export type {
  SessionView,
  QuestionView,
  LocationView,
  AgentSessionState,
  TerminalOutputResult,
  StampedRecord,
  HostRecord,
  ReadEvent,
  WorktreeStatusView,
  InstallEvent,
} from "../../../src/host/views.js";
import type { DeviceLoginView } from "../../../src/protocol/device-login-view.js";

export type { AgentDetails, CatalogueView } from "../../../src/host/agent-catalogue.js";
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

export type { ChangeSet as SessionChanges, ChangedFileView, ReviewComment } from "../../../src/host/views.js";
export type { NewComment as NewReviewComment } from "../../../src/host/views.js";
import type { ChangeSet } from "../../../src/host/views.js";

export type ChangedFile = ChangeSet["files"][number];
export type SessionWorktree = NonNullable<SessionView["worktree"]>;
