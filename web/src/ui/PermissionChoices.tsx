import type { PermissionOption } from "@agentclientprotocol/sdk";

const toneOf: Record<string, string> = {
  allow_once: "primary",
  allow_always: "primary",
  reject_once: "danger",
  reject_always: "danger",
};

/** A permission question's options, one button each. */
export function PermissionChoices({
  options,
  disabled,
  onChoose,
}: {
  options: readonly PermissionOption[];
  disabled: boolean;
  onChoose: (optionId: string) => void;
}) {
  return (
    <div class="choices" role="group" aria-label="Answer">
      {options.map((option) => (
        <button type="button" key={option.optionId} class={toneOf[option.kind] ?? ""} disabled={disabled} onClick={() => onChoose(option.optionId)}>
          {option.name}
        </button>
      ))}
    </div>
  );
}
