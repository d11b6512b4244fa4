import type { SessionUpdate } from "@agentclientprotocol/sdk";

/** One choice of a picker; `group` names the group it belongs to when the agent groups them. */
export interface Choice {
  readonly value: string;
  readonly name: string;
  readonly description: string | null;
  readonly group: string | null;
}

export interface Picker {
  readonly current: string;
  readonly choices: readonly Choice[];
}

/** A session config option the page can show: a select, or an on/off switch. */
type ConfigControl =
  | {
      readonly type: "select";
      readonly id: string;
      readonly name: string;
      readonly description: string | null;
      readonly current: string;
      readonly choices: readonly Choice[];
    }
  | { readonly type: "boolean"; readonly id: string; readonly name: string; readonly description: string | null; readonly current: boolean };

/** What the agent reported it spent: the last turn's tokens (from its `session/prompt` answer), its context window and cost (from `usage_update`). */
export interface UsageReport {
  readonly lastTurn: {
    readonly total: number;
    readonly input: number;
    readonly output: number;
    readonly thought: number | null;
    readonly cachedRead: number | null;
    readonly cachedWrite: number | null;
  } | null;
  readonly context: { readonly used: number; readonly size: number } | null;
  readonly cost: { readonly amount: number; readonly currency: string } | null;
}

/**
 * The agent's controls for one session, as its answers and updates report them: its mode and
 * model pickers (ACP's `modes`, and the `models` of the draft Berth passes through), its config
 * options, and its usage. A picker the agent also offers as a config option of category `mode`
 * or `model` is left to the config option (ACP prefers config options).
 */
export interface AgentControls {
  readonly mode: Picker | null;
  readonly model: Picker | null;
  readonly options: readonly ConfigControl[];
  readonly usage: UsageReport;
}

/** What the person changes: the request to send for it. */
export type ControlChange =
  | { readonly kind: "mode"; readonly value: string }
  | { readonly kind: "model"; readonly value: string }
  | { readonly kind: "option"; readonly id: string; readonly value: string | boolean };

const noUsage: UsageReport = { lastTurn: null, context: null, cost: null };
export const noControls: AgentControls = { mode: null, model: null, options: [], usage: noUsage };

/** The controls a `session/new`, `session/load` or `session/resume` answer reports (the usage so far is kept). */
export function controlsOfAnswer(answer: unknown, usage: UsageReport = noUsage): AgentControls {
  const fields = isObject(answer) ? answer : {};
  const options = configControls(fields.configOptions);
  const categories = new Set(Array.isArray(fields.configOptions) ? fields.configOptions.map((o) => (isObject(o) ? o.category : undefined)) : []);
  return {
    mode: categories.has("mode") ? null : picker(fields.modes, "currentModeId", "availableModes", "id"),
    model: categories.has("model") ? null : picker(fields.models, "currentModelId", "availableModels", "modelId"),
    options,
    usage,
  };
}

/** The controls after an update; undefined when the update says nothing of them. */
export function controlsWithUpdate(controls: AgentControls, update: SessionUpdate): AgentControls | undefined {
  switch (update.sessionUpdate) {
    case "current_mode_update":
      return controls.mode ? { ...controls, mode: { ...controls.mode, current: update.currentModeId } } : undefined;
    case "config_option_update":
      return { ...controls, options: configControls(update.configOptions) };
    case "usage_update":
      return {
        ...controls,
        usage: {
          ...controls.usage,
          context: { used: update.used, size: update.size },
          cost: update.cost ? { amount: update.cost.amount, currency: update.cost.currency } : controls.usage.cost,
        },
      };
    default:
      return undefined;
  }
}

/** The controls after a turn answered with its `usage` (ACP's `PromptResponse.usage`), if it had one. */
export function controlsWithTurnUsage(controls: AgentControls, usage: unknown): AgentControls {
  if (!isObject(usage) || typeof usage.totalTokens !== "number") return controls;
  const count = (value: unknown): number | null => (typeof value === "number" ? value : null);
  return {
    ...controls,
    usage: {
      ...controls.usage,
      lastTurn: {
        total: usage.totalTokens,
        input: count(usage.inputTokens) ?? 0,
        output: count(usage.outputTokens) ?? 0,
        thought: count(usage.thoughtTokens),
        cachedRead: count(usage.cachedReadTokens),
        cachedWrite: count(usage.cachedWriteTokens),
      },
    },
  };
}

/** The controls once a change succeeded; `result` is the agent's answer (set_config_option returns every option). */
export function controlsWithChange(controls: AgentControls, change: ControlChange, result: unknown): AgentControls {
  switch (change.kind) {
    case "mode":
      return controls.mode ? { ...controls, mode: { ...controls.mode, current: change.value } } : controls;
    case "model":
      return controls.model ? { ...controls, model: { ...controls.model, current: change.value } } : controls;
    case "option": {
      if (isObject(result) && Array.isArray(result.configOptions)) return { ...controls, options: configControls(result.configOptions) };
      return {
        ...controls,
        options: controls.options.map((option) =>
          option.id !== change.id
            ? option
            : option.type === "boolean"
              ? { ...option, current: change.value === true }
              : { ...option, current: String(change.value) },
        ),
      };
    }
  }
}

/** The ACP request for a change. */
export function requestOf(change: ControlChange, sessionId: string, controls: AgentControls): { method: string; params: Record<string, unknown> } {
  switch (change.kind) {
    case "mode":
      return { method: "session/set_mode", params: { sessionId, modeId: change.value } };
    case "model":
      return { method: "session/set_model", params: { sessionId, modelId: change.value } };
    case "option": {
      const isBoolean = controls.options.find((option) => option.id === change.id)?.type === "boolean";
      return {
        method: "session/set_config_option",
        params: isBoolean
          ? { sessionId, configId: change.id, type: "boolean", value: change.value }
          : { sessionId, configId: change.id, value: change.value },
      };
    }
  }
}

export function hasControls(controls: AgentControls): boolean {
  const { usage } = controls;
  return (
    controls.mode !== null ||
    controls.model !== null ||
    controls.options.length > 0 ||
    usage.lastTurn !== null ||
    usage.context !== null ||
    usage.cost !== null
  );
}

function picker(state: unknown, currentKey: string, listKey: string, idKey: string): Picker | null {
  if (!isObject(state) || typeof state[currentKey] !== "string" || !Array.isArray(state[listKey])) return null;
  const choices = state[listKey].flatMap((entry): Choice[] =>
    isObject(entry) && typeof entry[idKey] === "string"
      ? [{ value: entry[idKey], name: text(entry.name) ?? entry[idKey], description: text(entry.description), group: null }]
      : [],
  );
  return choices.length > 0 ? { current: state[currentKey], choices } : null;
}

function configControls(options: unknown): ConfigControl[] {
  if (!Array.isArray(options)) return [];
  // Read as plain JSON: an agent's option may be of a shape or kind this page does not know, and is then left out.
  return (options as unknown[]).flatMap((option): ConfigControl[] => {
    if (!isObject(option) || typeof option.id !== "string") return [];
    const base = { id: option.id, name: text(option.name) ?? option.id, description: text(option.description) };
    if (option.type === "boolean" && typeof option.currentValue === "boolean") return [{ type: "boolean", ...base, current: option.currentValue }];
    if (option.type !== "select" || typeof option.currentValue !== "string" || !Array.isArray(option.options)) return [];
    const choices = (option.options as unknown[]).flatMap((entry): Choice[] => {
      if (!isObject(entry)) return [];
      if (Array.isArray(entry.options)) return entry.options.flatMap((inner) => choiceOf(inner, text(entry.name)));
      return choiceOf(entry, null);
    });
    return [{ type: "select", ...base, current: option.currentValue, choices }];
  });
}

function choiceOf(entry: unknown, group: string | null): Choice[] {
  if (!isObject(entry) || typeof entry.value !== "string") return [];
  return [{ value: entry.value, name: text(entry.name) ?? entry.value, description: text(entry.description), group }];
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
