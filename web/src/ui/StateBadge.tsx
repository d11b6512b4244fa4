import type { SessionView } from "../api/types.js";
import { type Activity, activityOf, activityWords } from "./activity.js";
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

/** Where the session's agent process is (not running, starting, running, stopping): for Details and the Host page. */
export function SessionStateBadge({ state }: { state: keyof typeof sessionTones }) {
  const words = stateWords[state];
  return <StateBadge state={words?.plain ?? state} term={words?.term} tone={sessionTones[state] ?? "muted"} />;
}

const activityTones: Readonly<Record<Activity, "ok" | "warn" | "danger" | "info" | "muted">> = {
  working: "info",
  waiting: "warn",
  idle: "muted",
  stopped: "muted",
  failed: "danger",
};

/** What the session's agent is doing, in one chip: working, waiting for you, idle, stopped, failed. */
export function ActivityChip({ session }: { session: SessionView }) {
  const activity = activityOf(session);
  const words = activityWords[activity];
  const reason = activity === "failed" && session.lastTurn?.reason ? `: ${session.lastTurn.reason}` : "";
  return (
    <span class={`badge chip ${activityTones[activity]}`} data-activity={activity} title={`${words.term}${reason}`}>
      {words.plain}
    </span>
  );
}
