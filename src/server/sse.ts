import type { ServerResponse } from "node:http";
import type { Host } from "../host/host.js";
import type { SessionView } from "../host/views.js";
import { EventStreams } from "./event-streams.js";

export interface OperatorEventsOptions {
  /** A comment line this often keeps proxies from closing a quiet stream (default 15 s). */
  readonly keepAliveMs?: number;
  /** At most one `session` event per session this often (default 100 ms). */
  readonly coalesceMs?: number;
}

/**
 * `GET /api/events`: every lifecycle record, coalesced session changes, deletions and agent
 * state changes, as Server-Sent Events to every connected operator view; in a fleet, every host's.
 */
export class OperatorEvents {
  private readonly streams: EventStreams;
  private readonly unsubscribe: Array<() => void>;

  constructor(
    private readonly host: Host,
    options: OperatorEventsOptions = {},
  ) {
    this.streams = new EventStreams(options.keepAliveMs ?? 15_000, options.coalesceMs ?? 100);
    this.unsubscribe = [
      host.onRecord((stamped) => {
        this.broadcast("record", stamped);
        // However it was deleted (REST, an ACP client, the host itself), views drop it; lost to another host of a fleet,
        // they drop it too, or read it again if this host shows it as that host's already.
        if (stamped.record.kind === "session_deleted") this.sessionDeleted(stamped.record.sessionId);
        if (stamped.record.kind === "session_lost") this.sessionGone(stamped.record.sessionId);
      }),
      // Another host's records are streamed too; what they mean for the views comes from the fleet's sessions themselves.
      host.onPeerRecord((stamped) => this.broadcast("record", stamped)),
      host.onPeerSessionGone((sessionId) => this.sessionGone(sessionId)),
      host.onSessionChanged((sessionId) => this.sessionChanged(sessionId)),
      // A page reading a session without holding it shows its agent's mode, model and options: it reads them again.
      host.onAgentStateChanged((sessionId) => this.broadcast("agent_state", { id: sessionId })),
    ];
  }

  get size(): number {
    return this.streams.size;
  }

  /** Takes over the response as an event stream until the client goes away. */
  attach(res: ServerResponse): void {
    this.streams.attach(res);
  }

  /** A session left this host's own or another's list: dropped, unless the host shows it still (it moved between hosts). */
  private sessionGone(sessionId: string): void {
    if (this.viewOf(sessionId)) this.sessionChanged(sessionId);
    else this.sessionDeleted(sessionId);
  }

  /** A session was deleted: views drop it at once; a change still pending for it is moot. */
  private sessionDeleted(sessionId: string): void {
    this.streams.cancel(sessionId);
    this.broadcast("session_deleted", { id: sessionId });
  }

  /** Ends every open stream and keeps serving new ones (their clients reconnect, and are checked again). */
  endStreams(): void {
    this.streams.endAll();
  }

  close(): void {
    for (const stop of this.unsubscribe) stop();
    this.streams.close();
  }

  private sessionChanged(sessionId: string): void {
    this.streams.soon(sessionId, () => {
      // Gone meanwhile: its deletion is announced on its own.
      const view = this.viewOf(sessionId);
      if (view) this.broadcast("session", view);
    });
  }

  private viewOf(sessionId: string): SessionView | undefined {
    try {
      return this.host.getSession(sessionId);
    } catch {
      // The host closed its journal (shutdown) after this change was scheduled.
      return undefined;
    }
  }

  private broadcast(event: string, data: unknown): void {
    this.streams.broadcast(event, data);
  }
}
