import type { ServerResponse } from "node:http";
import type { Host } from "../host/host.js";
import type { SessionView } from "../host/views.js";
import { EventStreams, sseFrame } from "./event-streams.js";

/** The route each host follows at its peers (one hop: only their own sessions). */
export const OWN_SESSIONS_PATH = "/api/own-sessions/events";
/** Often enough that a follower takes a silent stream as a hung host within seconds (it waits {@link OWN_SESSIONS_SILENCE_MS}). */
const KEEP_ALIVE_MS = 5_000;
/** A follower that heard nothing, not even a keep-alive, for this long ends the stream and connects again. */
export const OWN_SESSIONS_SILENCE_MS = 3 * KEEP_ALIVE_MS;

/**
 * `GET /api/own-sessions/events`: the views of this host's own sessions, never what it shows of its peers' (docs/fleet.md,
 * "One view"): the stream every peer of a fleet with a cluster secret follows to show this host's sessions live. First
 * `snapshot` (every own session), then `session` when one changed (coalesced like `GET /api/events`) and
 * `session_deleted` when one stopped being this host's (deleted, lost, released). One hop: a peer's session is never
 * sent, so no two hosts ever pass each other's views back and forth.
 */
export class OwnSessionEvents {
  private readonly streams: EventStreams;
  /** The sessions the open streams were told of and not told gone: a session no longer found here is gone only if in it. */
  private readonly told = new Set<string>();
  private readonly unsubscribe: Array<() => void>;

  constructor(
    private readonly host: Host,
    coalesceMs = 100,
  ) {
    this.streams = new EventStreams(KEEP_ALIVE_MS, coalesceMs);
    const changed = (sessionId: string) => this.streams.soon(sessionId, () => this.send(sessionId));
    this.unsubscribe = [
      host.onSessionChanged(changed),
      // Deleted or lost here: no `session` change follows, the record says it.
      host.onRecord((stamped) => {
        const { record } = stamped;
        if (record.kind === "session_deleted" || record.kind === "session_lost") changed(record.sessionId);
      }),
      // A peer's session this host adopted is its own from now on.
      host.onPeerSessionGone(changed),
    ];
  }

  /** Takes over the response: the snapshot of every own session first, then the changes. */
  attach(res: ServerResponse): void {
    // The first stream after none: what earlier streams were told does not matter any more.
    if (this.streams.size === 0) this.told.clear();
    const sessions = this.host.ownSessions();
    for (const view of sessions) this.told.add(view.id);
    this.streams.attach(res, sseFrame("snapshot", { sessions }));
  }

  /** Ends every open stream and keeps serving new ones (a peer reconnects with a fresh proof, a token holder is checked again). */
  endStreams(): void {
    this.streams.endAll();
  }

  close(): void {
    for (const stop of this.unsubscribe) stop();
    this.streams.close();
  }

  private send(sessionId: string): void {
    const view = this.viewOf(sessionId);
    if (view) {
      this.told.add(sessionId);
      this.streams.broadcast("session", view);
    } else if (this.told.delete(sessionId)) {
      this.streams.broadcast("session_deleted", { id: sessionId });
    }
  }

  private viewOf(sessionId: string): SessionView | undefined {
    try {
      return this.host.ownSession(sessionId);
    } catch {
      // The host closed its journal (shutdown) after this change was scheduled.
      return undefined;
    }
  }
}
