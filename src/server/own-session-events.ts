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
/** An agent's message is journaled chunk by chunk: its session's new `preview` is sent at most this often. */
const PREVIEW_EVERY_MS = 1_000;

/** What the stream needs of the host: its own sessions, and word of their changes. */
export type StreamedHost = Pick<Host, "ownSession" | "ownSessions" | "onSessionChanged" | "onRecord" | "onPeerSessionGone" | "onAgentMessage">;

/**
 * `GET /api/own-sessions/events`: the views of this host's own sessions, never what it shows of its peers' (docs/fleet.md,
 * "One view"): the stream every peer of a fleet with a cluster secret follows to show this host's sessions live. First
 * `snapshot` (every own session), then `session` when one changed (coalesced like `GET /api/events`, and at most once a
 * second while its agent speaks, for its `preview`) and `session_deleted` when one stopped being this host's (deleted, or
 * lost to another host). One hop: a peer's session is never sent, so no two hosts ever pass each other's views back and forth.
 */
export class OwnSessionEvents {
  private readonly streams: EventStreams;
  /** The sessions the open streams were told of and not told gone: a session no longer found here is gone only if in it. */
  private readonly told = new Set<string>();
  /** Sessions whose agent spoke since their last `preview` went out, each sent once its wait ends. */
  private readonly speaking = new Map<string, NodeJS.Timeout>();
  private readonly unsubscribe: Array<() => void>;

  constructor(
    private readonly host: StreamedHost,
    coalesceMs = 100,
    private readonly previewEveryMs = PREVIEW_EVERY_MS,
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
      host.onAgentMessage((sessionId) => this.spoke(sessionId, changed)),
    ];
  }

  /** Takes over the response: the snapshot of every own session first, then the changes. Throws, answering nothing, once the host stopped. */
  attach(res: ServerResponse): void {
    const sessions = this.host.ownSessions();
    // The first stream after none: what earlier streams were told does not matter any more.
    if (this.streams.size === 0) this.told.clear();
    for (const view of sessions) this.told.add(view.id);
    this.streams.attach(res, sseFrame("snapshot", { sessions }));
  }

  /** Ends every open stream and keeps serving new ones (a peer reconnects with a fresh proof, a token holder is checked again). */
  endStreams(): void {
    this.streams.endAll();
  }

  close(): void {
    for (const stop of this.unsubscribe) stop();
    for (const timer of this.speaking.values()) clearTimeout(timer);
    this.speaking.clear();
    this.streams.close();
  }

  /** The first chunk of a message starts the wait; the chunks during it join the one `session` sent at its end. */
  private spoke(sessionId: string, changed: (sessionId: string) => void): void {
    if (this.streams.size === 0 || this.speaking.has(sessionId)) return;
    const timer = setTimeout(() => {
      this.speaking.delete(sessionId);
      changed(sessionId);
    }, this.previewEveryMs);
    this.speaking.set(sessionId, timer);
  }

  private send(sessionId: string): void {
    let view: SessionView | undefined;
    try {
      view = this.host.ownSession(sessionId);
    } catch {
      // The host closed its store (shutdown) after this change was scheduled: nothing is known, so nothing is said.
      return;
    }
    if (view) {
      this.told.add(sessionId);
      this.streams.broadcast("session", view);
    } else if (this.told.delete(sessionId)) {
      this.streams.broadcast("session_deleted", { id: sessionId });
    }
  }
}
