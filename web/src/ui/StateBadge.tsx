import { stateWords } from "./plain-words.js";

/** A short state word with a colour that does not carry meaning alone (the word does); `term` is the design's word, on hover. */
export function StateBadge({ state, tone, term }: { state: string; tone: "ok" | "warn" | "danger" | "info" | "muted"; term?: string }) {
  return (
    <span class={`badge ${tone}`} title={term}>
      {state}
    </span>
  );
}

const sessionTones = { childless: "muted", acquiring: "info", live: "ok", releasing: "warn" } as const;

export function SessionStateBadge({ state }: { state: keyof typeof sessionTones }) {
  const words = stateWords[state];
  return <StateBadge state={words?.plain ?? state} term={words?.term} tone={sessionTones[state] ?? "muted"} />;
}
