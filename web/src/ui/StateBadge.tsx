import type { SessionView, WorktreeStatusView } from "../api/types.js";
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

/**
 * A worktree session's chip: landed or discarded once closed; ready to review while its agent is idle with changes
 * to look at (`status.readyToReview`); else what its agent is doing, as any session's.
 */
export function SessionChip({ session, status }: { session: SessionView; status: WorktreeStatusView | null }) {
  const state = session.worktree?.state;
  if (state === "landed" || state === "discarded")
    return (
      <span
        class={`badge chip ${state === "landed" ? "ok" : "muted"}`}
        data-activity={state}
        title={`its branch was ${state} (worktree.state: ${state})`}
      >
        {state}
      </span>
    );
  if (status?.readyToReview && activityOf(session) === "idle")
    return (
      <span
        class="badge chip ok"
        data-activity="ready-to-review"
        title="its agent is done for now and left changes to look at (readyToReview: ahead or uncommitted, no turn, no question)"
      >
        ready to review
      </span>
    );
  return <ActivityChip session={session} />;
}
