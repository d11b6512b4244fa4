import type { SessionView } from "../api/types.js";

/** A plain label, with the design's own word for the tooltip. */
export interface Words {
  readonly plain: string;
  readonly term: string;
}

/** Where a session's agent process is, in plain words (the design calls it the agent child). */
export const stateWords: Readonly<Record<SessionView["state"], Words>> = {
  childless: { plain: "not running", term: "childless: no agent child process" },
  acquiring: { plain: "starting", term: "acquiring: the agent child is being started" },
  live: { plain: "running", term: "live: the agent child runs" },
  releasing: { plain: "stopping", term: "releasing: the agent child is being stopped" },
};
