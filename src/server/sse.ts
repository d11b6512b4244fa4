import type { ServerResponse } from "node:http";
import type { Host } from "../host/host.js";
import type { SessionView } from "../host/views.js";

export interface OperatorEventsOptions {
  /** A comment line this often keeps proxies from closing a quiet stream (default 15 s). */
  readonly keepAliveMs?: number;
  /** At most one `session` event per session this often (default 100 ms). */
  readonly coalesceMs?: number;
}

/** A stream that stopped reading this much is dropped rather than buffered without end. */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;
const RETRY_MS = 2_000;

/**
 * `GET /api/events`: every lifecycle record, coalesced session changes, deletions and agent
 * state changes, as Server-Sent Events to every connected operator view; in a fleet, every host's.
 */
export class OperatorEvents {
  private readonly streams = new Set<ServerResponse>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly unsubscribe: Array<() => void>;
  private readonly keepAlive: NodeJS.Timeout;
  private readonly coalesceMs: number;

  constructor(
    private readonly host: Host,
    options: OperatorEventsOptions = {},
  ) {
    this.coalesceMs = options.coalesceMs ?? 100;
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
    this.keepAlive = setInterval(() => this.write(": keep-alive\n\n"), options.keepAliveMs ?? 15_000);
    this.keepAlive.unref();
  }

  get size(): number {
    return this.streams.size;
  }

  /** Takes over the response as an event stream until the client goes away. */
  attach(res: ServerResponse): void {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    res.write(`retry: ${RETRY_MS}\n\n`);
    this.streams.add(res);
    res.on("close", () => this.streams.delete(res));
  }

  /** A session left this host's own or another's list: dropped, unless the host shows it still (it moved between hosts). */
  private sessionGone(sessionId: string): void {
    if (this.viewOf(sessionId)) this.sessionChanged(sessionId);
    else this.sessionDeleted(sessionId);
  }

  /** A session was deleted: views drop it at once; a change still pending for it is moot. */
  private sessionDeleted(sessionId: string): void {
    clearTimeout(this.pending.get(sessionId));
    this.pending.delete(sessionId);
    this.broadcast("session_deleted", { id: sessionId });
  }

  /** Ends every open stream and keeps serving new ones (their clients reconnect, and are checked again). */
  endStreams(): void {
    for (const res of this.streams) res.end();
    this.streams.clear();
  }

  close(): void {
    for (const stop of this.unsubscribe) stop();
    clearInterval(this.keepAlive);
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    for (const res of this.streams) res.end();
    this.streams.clear();
  }

  private sessionChanged(sessionId: string): void {
    if (this.streams.size === 0 || this.pending.has(sessionId)) return;
    const timer = setTimeout(() => {
      this.pending.delete(sessionId);
      // Gone meanwhile: its deletion is announced on its own.
      const view = this.viewOf(sessionId);
      if (view) this.broadcast("session", view);
    }, this.coalesceMs);
    this.pending.set(sessionId, timer);
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
    if (this.streams.size > 0) this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private write(frame: string): void {
    for (const res of this.streams) {
      if (res.writableLength > MAX_UNSENT_BYTES) {
        res.destroy();
        this.streams.delete(res);
        continue;
      }
      res.write(frame);
    }
  }
}
