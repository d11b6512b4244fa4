import type { SessionView } from "../api/types.js";

/** A plain label, with the design's own word (and what it means) for the tooltip. */
export interface Words {
  readonly plain: string;
  readonly term: string;
}

/** Where a session's agent process is, in plain words (the design calls it the agent child). */
export const stateWords: Readonly<Record<SessionView["state"], Words>> = {
  childless: { plain: "not running", term: "childless: the session has no agent child process" },
  acquiring: { plain: "starting", term: "acquiring: the agent child is being started" },
  live: { plain: "running", term: "live: the agent child runs" },
  releasing: { plain: "stopping", term: "releasing: the agent child is being stopped" },
};

/** A location's state. */
export const locationStateWords: Readonly<Record<string, Words>> = {
  retained: { plain: "kept", term: "retained: its services stay up until its deadlines" },
  interrupting: { plain: "interrupting", term: "interrupting: its silent work reached the cap and is being interrupted" },
  evicting: { plain: "closing", term: "evicting: its agents, terminals and services are being stopped" },
};

export const words = {
  holders: {
    plain: "Clients",
    term: "holders: the clients and views (an editor, an open chat) keeping this session's agent process alive",
  },
  release: { plain: "Stops", term: "release grace: how long an agent process nobody holds is kept warm" },
  activeExecution: { plain: "a turn is running", term: "active execution: a running turn keeps its location, up to the cap" },
  idleTtl: { plain: "idle timeout", term: "idle TTL: how long a location with no running turn is kept after its last activity" },
  idleDeadline: { plain: "Closes if idle", term: "idle deadline (expiresAt): the end of the idle TTL" },
  cap: { plain: "Hard limit", term: "cap (max active hold): how long running turns may keep a location with nothing recorded" },
} as const satisfies Record<string, Words>;
