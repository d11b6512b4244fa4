import { isDeepStrictEqual } from "node:util";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Json } from "../store/index.js";

/**
 * A session's state as its agent reports it: what `session/new`, `session/load` and
 * `session/resume` answer (modes, models, config options) and what updates announce (the
 * current mode, options, commands). Kept as the agent sent it — `models` is not even in the
 * SDK's schema — so clients get exactly what the agent said.
 */
export interface AgentSessionState {
  modes?: Json;
  models?: Json;
  configOptions?: Json;
  availableCommands?: Json;
  /** The `_meta` of the agent's last session answer. */
  _meta?: Json;
  /** The agent's own title for the session, as its last `session_info_update` with one said. */
  title?: Json;
  /** Who named the session, if not Berth from its first prompt: a person's name outlasts the agent's (session-titles.ts). */
  titledBy?: "agent" | "person";
}

/** The keys of a session answer that describe the session's state. */
const ANSWER_KEYS = ["modes", "models", "configOptions", "_meta"] as const;

/** A request that brings a new child of the session back to a state the session had. */
export interface RestoreStep {
  readonly method: string;
  readonly params: Record<string, Json>;
}

export function stateOf(stored: Json | null): AgentSessionState {
  return isObject(stored) ? (stored as AgentSessionState) : {};
}

/** The state after an answer to `session/new`, `session/load` or `session/resume`: what it names replaces. */
export function withAnswer(state: AgentSessionState, answer: unknown): AgentSessionState {
  if (!isObject(answer)) return state;
  const next = { ...state };
  for (const key of ANSWER_KEYS) if (answer[key] !== undefined && answer[key] !== null) next[key] = answer[key];
  return next;
}

type UpdateOf<K extends SessionUpdate["sessionUpdate"]> = Extract<SessionUpdate, { sessionUpdate: K }>;

/**
 * The updates that change a session's state, each with the state it leaves: every other kind (the
 * chunks of a streaming reply above all) leaves the state as it is and needs no look at the stored one.
 */
const STATE_UPDATES = {
  current_mode_update: (state, update) =>
    isObject(state.modes) ? { ...state, modes: { ...state.modes, currentModeId: update.currentModeId } } : state,
  config_option_update: (state, update) => ({ ...state, configOptions: update.configOptions as unknown as Json }),
  available_commands_update: (state, update) => ({ ...state, availableCommands: update.availableCommands as unknown as Json }),
} satisfies { [K in SessionUpdate["sessionUpdate"]]?: (state: AgentSessionState, update: UpdateOf<K>) => AgentSessionState };

/** An update of a kind that changes the session's state. */
export type StateUpdate = UpdateOf<keyof typeof STATE_UPDATES>;

/** Whether the update is of a kind that changes the session's state (see {@link withUpdate}). */
export function changesState(update: SessionUpdate): update is StateUpdate {
  return Object.hasOwn(STATE_UPDATES, update.sessionUpdate);
}

/** The state after an update that changes it. */
export function withUpdate(state: AgentSessionState, update: StateUpdate): AgentSessionState {
  const next = STATE_UPDATES[update.sessionUpdate] as (state: AgentSessionState, update: StateUpdate) => AgentSessionState;
  return next(state, update);
}

/** The state after a client's request succeeded; undefined when the request does not change it. */
export function withRequest(state: AgentSessionState, method: string, params: unknown, result: unknown): AgentSessionState | undefined {
  if (!isObject(params)) return undefined;
  switch (method) {
    case "session/set_mode":
      return isObject(state.modes) ? { ...state, modes: { ...state.modes, currentModeId: params.modeId as Json } } : undefined;
    case "session/set_model":
      return isObject(state.models) ? { ...state, models: { ...state.models, currentModelId: params.modelId as Json } } : undefined;
    case "session/set_config_option":
      return isObject(result) && Array.isArray(result.configOptions) ? { ...state, configOptions: result.configOptions } : undefined;
    default:
      return undefined;
  }
}

/**
 * The update that tells a session's clients what a successful request changed, as most agents send it themselves
 * (opencode does not); undefined for a request that changes nothing ACP has an update for (`set_model`).
 */
export function announcementOf(method: string, params: unknown, result: unknown): StateUpdate | undefined {
  if (!isObject(params)) return undefined;
  switch (method) {
    case "session/set_mode":
      return typeof params.modeId === "string" ? { sessionUpdate: "current_mode_update", currentModeId: params.modeId } : undefined;
    case "session/set_config_option":
      return isObject(result) && Array.isArray(result.configOptions)
        ? ({ sessionUpdate: "config_option_update", configOptions: result.configOptions } as unknown as StateUpdate)
        : undefined;
    default:
      return undefined;
  }
}

/**
 * Whether an update the agent sent while a `set_*` ran says what Berth would announce for it: the same kind with the
 * same value. One of the same kind saying something else (a turn leaving plan mode meanwhile) is not the request's.
 */
export function announces(update: unknown, announcement: StateUpdate): boolean {
  if (!isObject(update)) return false;
  const { _meta: _ignored, ...said } = update;
  return isDeepStrictEqual(said, announcement);
}

/** What a session answer's state fields should say: the stored state, as a new child brought it back. */
export function answerFields(state: AgentSessionState): Record<string, Json> {
  const fields: Record<string, Json> = {};
  for (const key of ANSWER_KEYS) if (state[key] !== undefined) fields[key] = state[key];
  return fields;
}

/**
 * The requests that bring a new child (which reported `fresh`) back to the session's `stored`
 * choices: the mode, the model and each config option's value the user had picked.
 */
export function restoreSteps(stored: AgentSessionState, fresh: AgentSessionState, sessionId: string): RestoreStep[] {
  const steps: RestoreStep[] = [];
  const mode = field(stored.modes, "currentModeId");
  if (mode !== undefined && mode !== field(fresh.modes, "currentModeId")) {
    steps.push({ method: "session/set_mode", params: { sessionId, modeId: mode } });
  }
  const model = field(stored.models, "currentModelId");
  if (model !== undefined && model !== field(fresh.models, "currentModelId")) {
    steps.push({ method: "session/set_model", params: { sessionId, modelId: model } });
  }
  const freshValues = new Map(options(fresh.configOptions).map((option) => [option.id, option.currentValue]));
  for (const option of options(stored.configOptions)) {
    if (freshValues.has(option.id) && freshValues.get(option.id) !== option.currentValue) {
      steps.push({ method: "session/set_config_option", params: { sessionId, configId: option.id, value: option.currentValue } });
    }
  }
  return steps;
}

function options(value: Json | undefined): Array<{ id: string; currentValue: Json }> {
  if (!Array.isArray(value)) return [];
  return value.flatMap((option) =>
    isObject(option) && typeof option.id === "string" && option.currentValue !== undefined
      ? [{ id: option.id, currentValue: option.currentValue }]
      : [],
  );
}

function field(value: Json | undefined, key: string): Json | undefined {
  return isObject(value) ? value[key] : undefined;
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
