import type { SessionView } from "../api/types.js";
import { type Activity, activityOf } from "./activity.js";

/** What the person narrows the session list to; an empty field does not narrow. */
export interface SessionFilter {
  /** Words that must all appear in the title (or the id), in any case and with or without accents. */
  readonly text: string;
  /** A session directory, exactly. */
  readonly folder: string;
  readonly agent: string;
  /** What its agent is doing (working, waiting for you, idle, stopped, failed). */
  readonly activity: "" | Activity;
  /** Only sessions with a question waiting. */
  readonly waiting: boolean;
}

export const noFilter: SessionFilter = { text: "", folder: "", agent: "", activity: "", waiting: false };

export function isFiltering(filter: SessionFilter): boolean {
  return filter.text.trim() !== "" || filter.folder !== "" || filter.agent !== "" || filter.activity !== "" || filter.waiting;
}

export function matchesFilter(session: SessionView, filter: SessionFilter): boolean {
  if (filter.folder !== "" && session.cwd !== filter.folder) return false;
  if (filter.agent !== "" && session.agent !== filter.agent) return false;
  if (filter.activity !== "" && activityOf(session) !== filter.activity) return false;
  if (filter.waiting && session.pendingQuestions === 0) return false;
  const words = folded(filter.text).split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const haystack = folded(`${session.title ?? ""} ${session.id}`);
  return words.every((word) => haystack.includes(word));
}

/** The folders and agents the sessions have, for the filter's menus, sorted. */
export function filterChoices(sessions: readonly SessionView[]): { readonly folders: string[]; readonly agents: string[] } {
  return {
    folders: [...new Set(sessions.map((session) => session.cwd))].sort(),
    agents: [...new Set(sessions.map((session) => session.agent))].sort(),
  };
}

/** Lower case without accents: `Café` finds `cafe`. */
function folded(text: string): string {
  return text
    .normalize("NFD")
    .replace(/\p{Diacritic}/gu, "")
    .toLowerCase();
}
