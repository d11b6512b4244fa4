/** A short state word with a colour that does not carry meaning alone (the word does). */
export function StateBadge({ state, tone }: { state: string; tone: "ok" | "warn" | "danger" | "info" | "muted" }) {
  return <span class={`badge ${tone}`}>{state}</span>;
}

const sessionTones = { childless: "muted", acquiring: "info", live: "ok", releasing: "warn" } as const;

export function SessionStateBadge({ state }: { state: keyof typeof sessionTones }) {
  return <StateBadge state={state} tone={sessionTones[state] ?? "muted"} />;
}
