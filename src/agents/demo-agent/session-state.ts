import { RequestError, type SessionConfigOption, type SessionModeState } from "@agentclientprotocol/sdk";
import { z } from "zod";

/**
 * What a session is set to. Kept in its conversation file, so a session loaded
 * or resumed by a new agent process keeps its mode, model and options.
 */
export const sessionSettingsSchema = z.object({
  modeId: z.string(),
  modelId: z.string(),
  config: z.record(z.string(), z.string()),
});
export type SessionSettings = z.infer<typeof sessionSettingsSchema>;

/**
 * The model selector of the ACP draft that SDK 2.4.0 dropped (`models`,
 * `session/set_model`); advertised so a proxy can be shown to pass it through.
 */
interface SessionModelState {
  currentModelId: string;
  availableModels: { modelId: string; name: string }[];
}

/** The session fields of a `session/new`, `session/load` or `session/resume` response. */
export interface SessionStateFields {
  modes: SessionModeState;
  models: SessionModelState;
  configOptions: SessionConfigOption[];
  _meta: { "berth-demo/session": string };
}

const availableModes = [
  { id: "ask", name: "Ask" },
  { id: "code", name: "Code" },
];

const availableModels = [
  { modelId: "demo-small", name: "Demo small" },
  { modelId: "demo-large", name: "Demo large" },
];

const selectOptions = [
  {
    id: "verbosity",
    name: "Verbosity",
    defaultValue: "normal",
    options: [
      { value: "terse", name: "Terse" },
      { value: "normal", name: "Normal" },
    ],
  },
];

export const defaultSettings: SessionSettings = {
  modeId: "ask",
  modelId: "demo-small",
  config: Object.fromEntries(selectOptions.map((option) => [option.id, option.defaultValue])),
};

/** The session's current state as a response carries it; `method` is the request it answers. */
export function sessionStateFields(settings: SessionSettings, method: string): SessionStateFields {
  return {
    modes: { currentModeId: settings.modeId, availableModes },
    models: { currentModelId: settings.modelId, availableModels },
    configOptions: configOptionsOf(settings),
    _meta: { "berth-demo/session": method },
  };
}

export function configOptionsOf(settings: SessionSettings): SessionConfigOption[] {
  return selectOptions.map(({ id, name, defaultValue, options }) => ({
    id,
    name,
    type: "select",
    currentValue: settings.config[id] ?? defaultValue,
    options,
  }));
}

export function withMode(settings: SessionSettings, modeId: string): SessionSettings {
  if (!availableModes.some((mode) => mode.id === modeId)) {
    throw RequestError.invalidParams({ modeId }, `unknown mode "${modeId}"; available: ${names(availableModes.map((mode) => mode.id))}`);
  }
  return { ...settings, modeId };
}

export function withModel(settings: SessionSettings, modelId: string): SessionSettings {
  if (!availableModels.some((model) => model.modelId === modelId)) {
    throw RequestError.invalidParams({ modelId }, `unknown model "${modelId}"; available: ${names(availableModels.map((model) => model.modelId))}`);
  }
  return { ...settings, modelId };
}

export function withConfigValue(settings: SessionSettings, configId: string, value: unknown): SessionSettings {
  const option = selectOptions.find((candidate) => candidate.id === configId);
  if (!option) {
    throw RequestError.invalidParams(
      { configId },
      `unknown config option "${configId}"; available: ${names(selectOptions.map((candidate) => candidate.id))}`,
    );
  }
  const values = option.options.map((choice) => choice.value);
  if (typeof value !== "string" || !values.includes(value)) {
    throw RequestError.invalidParams({ configId, value }, `invalid value ${JSON.stringify(value)} for "${configId}"; available: ${names(values)}`);
  }
  return { ...settings, config: { ...settings.config, [configId]: value } };
}

function names(ids: string[]): string {
  return ids.map((id) => `"${id}"`).join(", ");
}
