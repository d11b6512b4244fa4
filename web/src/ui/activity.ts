import type { SessionView } from "../api/types.js";
import type { Words } from "./plain-words.js";

/**
 * What a session's agent is doing, for a person: one of five, whatever its process is doing (a session whose
 * agent process was released is still idle: a prompt starts one).
 */
export type Activity = "working" | "waiting" | "idle" | "stopped" | "failed";

/** A question first (it needs the person, even mid-turn), then a running turn, then how the last turn ended. */
export function activityOf(session: Pick<SessionView, "pendingQuestions" | "turnActive" | "lastTurn">): Activity {
  if (session.pendingQuestions > 0) return "waiting";
  if (session.turnActive) return "working";
  switch (session.lastTurn?.outcome) {
    case "failed":
    case "exited":
      return "failed";
    case "cancelled":
      return "stopped";
    default:
      return "idle";
  }
}

/** Each activity's words, and the view's fields it is read from (on hover). */
export const activityWords: Readonly<Record<Activity, Words>> = {
  working: { plain: "working", term: "a turn runs (turnActive)" },
  waiting: { plain: "waiting for you", term: "the agent waits on a question (pendingQuestions)" },
  idle: { plain: "idle", term: "no turn runs: a prompt can be sent (its agent process may be stopped; a prompt starts it)" },
  stopped: { plain: "stopped", term: "its last turn was cancelled or interrupted (lastTurn.outcome: cancelled)" },
  failed: { plain: "failed", term: "its last turn ended in an error, or its agent process exited (lastTurn.outcome: failed / exited)" },
};

export const activities = Object.keys(activityWords) as Activity[];
