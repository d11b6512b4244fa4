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

/** One of an agent's ways to log in, as its `initialize` answer lists it. */
export interface AuthMethod {
  readonly id: string;
  readonly name: string;
  readonly description?: string | null;
}

/** The REST answer to a question: a permission option, or a form action. */
export type QuestionAnswer =
  | { readonly optionId: string }
  | { readonly action: "accept"; readonly content: Record<string, unknown> }
  | { readonly action: "decline" };

/** A remembered device, as `GET /api/logins` lists it; `current` is the device asking. */
export type DeviceLogin = DeviceLoginView & { readonly current: boolean };
