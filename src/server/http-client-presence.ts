/** How long a Streamable HTTP client may have no request and no event stream open before it counts as gone. */
export const DEFAULT_HTTP_CLIENT_IDLE_MS = 60_000;

interface Watched {
  /** Its requests and event streams open now. */
  open: number;
  /** Set while none is: it fires `gone`. */
  timer: NodeJS.Timeout | undefined;
}

/**
 * Whether a Streamable HTTP client is still there: while it has a request or an event stream open, and for `idleMs`
 * after the last one ended. One that vanished without `DELETE /acp` (its stream cut, nothing sent since) is then told
 * `gone`, so that its connection closes and its holds are released, instead of keeping its sessions' agents until
 * their hard limit (a WebSocket's close says the same at once).
 */
export class HttpClientPresence {
  private readonly watched = new Map<string, Watched>();

  constructor(
    private readonly idleMs: number,
    private readonly gone: (connectionId: string) => void,
  ) {}

  /** A request or event stream of the connection opened; the function returned says it ended (once). */
  opened(connectionId: string): () => void {
    let client = this.watched.get(connectionId);
    if (!client) {
      client = { open: 0, timer: undefined };
      this.watched.set(connectionId, client);
    }
    clearTimeout(client.timer);
    client.timer = undefined;
    client.open++;
    let ended = false;
    return () => {
      if (ended || this.watched.get(connectionId) !== client) return;
      ended = true;
      client.open--;
      if (client.open === 0) client.timer = setTimeout(() => this.expire(connectionId), this.idleMs);
    };
  }

  /** The connection closed (`DELETE /acp`, a limit, shutdown): nothing to watch any more. */
  forget(connectionId: string): void {
    clearTimeout(this.watched.get(connectionId)?.timer);
    this.watched.delete(connectionId);
  }

  /** Stops every clock (the server is closing). */
  close(): void {
    for (const connectionId of [...this.watched.keys()]) this.forget(connectionId);
  }

  private expire(connectionId: string): void {
    this.watched.delete(connectionId);
    this.gone(connectionId);
  }
}
