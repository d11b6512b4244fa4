import type { ServerResponse } from "node:http";

/** A stream that stopped reading this much is dropped rather than buffered without end. */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;
const RETRY_MS = 2_000;

/** One Server-Sent Event. */
export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The open Server-Sent Events responses of one route: each told the same frames, kept open by a comment line every
 * `keepAliveMs`, dropped once it stopped reading; and changes of one key (a session) sent at most once per
 * `coalesceMs`, the current state at the end of the wait.
 */
export class EventStreams {
  private readonly streams = new Set<ServerResponse>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    keepAliveMs: number,
    private readonly coalesceMs: number,
  ) {
    this.keepAlive = setInterval(() => this.write(": keep-alive\n\n"), keepAliveMs);
    this.keepAlive.unref();
  }

  get size(): number {
    return this.streams.size;
  }

  /** Takes over the response as an event stream until the client goes away; `first` is written before anything else. */
  attach(res: ServerResponse, first = ""): void {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    res.write(`retry: ${RETRY_MS}\n\n${first}`);
    this.streams.add(res);
    res.on("close", () => this.streams.delete(res));
  }

  /** `send` runs once `coalesceMs` after the first change of `key` (later ones meanwhile join it); nothing while no stream is open. */
  soon(key: string, send: () => void): void {
    if (this.streams.size === 0 || this.pending.has(key)) return;
    const timer = setTimeout(() => {
      this.pending.delete(key);
      send();
    }, this.coalesceMs);
    this.pending.set(key, timer);
  }

  /** A change of `key` still waiting is moot. */
  cancel(key: string): void {
    clearTimeout(this.pending.get(key));
    this.pending.delete(key);
  }

  broadcast(event: string, data: unknown): void {
    if (this.streams.size > 0) this.write(sseFrame(event, data));
  }

  /** Ends every open stream and keeps serving new ones (their clients reconnect, and are checked again). */
  endAll(): void {
    for (const res of this.streams) res.end();
    this.streams.clear();
  }

  close(): void {
    clearInterval(this.keepAlive);
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    this.endAll();
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
