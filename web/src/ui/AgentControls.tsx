import { errorWords } from "../util/error-words.js";
import { useState } from "preact/hooks";
import { type Choice, type ControlChange, hasControls, type Picker, type UsageReport } from "../chat/agent-controls.js";
import type { ChatSession } from "../chat/chat-session.js";
import { useObservable } from "../live/observable.js";

type Changing = { readonly name: "idle" } | { readonly name: "changing" } | { readonly name: "failed"; readonly message: string };

/**
 * The agent's own controls for the open session, when it offers them: mode and model pickers,
 * its config options (selects and switches) and what it reported it spent. Changes go to the
 * agent over the chat's ACP connection (`session/set_mode`, `session/set_model`,
 * `session/set_config_option`), holding the session first if the page was only reading it; Berth
 * keeps them for the session's next agent process, and shows them from there while a page reads it.
 */
export function AgentControls({ chat, enabled }: { chat: ChatSession; enabled: boolean }) {
  const controls = useObservable(chat.controls);
  const [changing, setChanging] = useState<Changing>({ name: "idle" });
  if (!hasControls(controls)) return null;
  const change = (next: ControlChange): void => {
    setChanging({ name: "changing" });
    chat.configure(next).then(
      () => setChanging({ name: "idle" }),
      (error: unknown) => setChanging({ name: "failed", message: errorWords(error) }),
    );
  };
  const disabled = !enabled || changing.name === "changing";
  return (
    <div class="agent-controls" role="group" aria-label="The agent's settings for this session">
      {controls.mode ? (
        <PickerSelect id="agent-mode" label="Mode" picker={controls.mode} disabled={disabled} onPick={(value) => change({ kind: "mode", value })} />
      ) : null}
      {controls.model ? (
        <PickerSelect
          id="agent-model"
          label="Model"
          picker={controls.model}
          disabled={disabled}
          onPick={(value) => change({ kind: "model", value })}
        />
      ) : null}
      {controls.options.map((option) =>
        option.type === "select" ? (
          <PickerSelect
            key={option.id}
            id={`agent-option-${option.id}`}
            label={option.name}
            hint={option.description}
            picker={{ current: option.current, choices: option.choices }}
            disabled={disabled}
            onPick={(value) => change({ kind: "option", id: option.id, value })}
          />
        ) : (
          <label key={option.id} class="control check" title={option.description ?? undefined}>
            <input
              type="checkbox"
              checked={option.current}
              disabled={disabled}
              onChange={(event) => change({ kind: "option", id: option.id, value: event.currentTarget.checked })}
            />
            {option.name}
          </label>
        ),
      )}
      <Usage usage={controls.usage} />
      {changing.name === "failed" ? (
        <p class="error" role="alert">
          The agent refused: {changing.message}
        </p>
      ) : null}
    </div>
  );
}

function PickerSelect({
  id,
  label,
  hint,
  picker,
  disabled,
  onPick,
}: {
  id: string;
  label: string;
  hint?: string | null;
  picker: Picker;
  disabled: boolean;
  onPick: (value: string) => void;
}) {
  const groups = [...new Set(picker.choices.map((choice) => choice.group))];
  const option = (choice: Choice) => (
    <option key={choice.value} value={choice.value} title={choice.description ?? undefined}>
      {choice.name}
    </option>
  );
  return (
    <span class="control" title={hint ?? undefined}>
      <label class="control-label" for={id}>
        {label}
      </label>
      <select id={id} value={picker.current} disabled={disabled} onChange={(event) => onPick(event.currentTarget.value)}>
        {groups.length === 1 && groups[0] === null
          ? picker.choices.map(option)
          : groups.map((group) => (
              <optgroup key={group ?? ""} label={group ?? "Other"}>
                {picker.choices.filter((choice) => choice.group === group).map(option)}
              </optgroup>
            ))}
      </select>
    </span>
  );
}

const tokens = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });
const count = new Intl.NumberFormat();

/** What the agent reported it spent: context window, cost, the last turn's tokens. */
function Usage({ usage }: { usage: UsageReport }) {
  const parts: preact.ComponentChildren[] = [];
  if (usage.context) {
    const { used, size } = usage.context;
    const share = size > 0 ? Math.round((used / size) * 100) : 0;
    parts.push(
      <span key="context" title={`${count.format(used)} of ${count.format(size)} tokens of the context window in use`}>
        Context {tokens.format(used)} / {tokens.format(size)} ({share}%)
      </span>,
    );
  }
  if (usage.cost)
    parts.push(
      <span key="cost" title="The session's cost so far, as the agent reports it">
        Cost {money(usage.cost.amount, usage.cost.currency)}
      </span>,
    );
  if (usage.lastTurn) {
    const turn = usage.lastTurn;
    const details = [
      `input ${count.format(turn.input)}`,
      `output ${count.format(turn.output)}`,
      turn.thought === null ? null : `thought ${count.format(turn.thought)}`,
      turn.cachedRead === null ? null : `cache read ${count.format(turn.cachedRead)}`,
      turn.cachedWrite === null ? null : `cache write ${count.format(turn.cachedWrite)}`,
    ].filter(Boolean);
    parts.push(
      <span key="turn" title={`Last turn: ${details.join(", ")} tokens`}>
        Last turn {count.format(turn.total)} tokens
      </span>,
    );
  }
  if (parts.length === 0) return null;
  return <p class="usage">{parts}</p>;
}

function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(amount);
  } catch {
    // Not an ISO 4217 code ("credits"): the number and the unit as the agent named it.
    return `${amount} ${currency}`;
  }
}
