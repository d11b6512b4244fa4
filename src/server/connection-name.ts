/**
 * A client connection's id: the one the SDK answers in `Acp-Connection-Id`, so the logs name a connection as its
 * client knows it. The SDK picks it only after Berth's agent app for the connection exists: the WebSocket path
 * learns it when the upgrade is prepared, before any message; the Streamable HTTP path from the `initialize`
 * answer, before the client can send anything else (an `initialize` the SDK failed is answered with no id: then the
 * connection, which the SDK dropped, gets one of Berth's own for its log lines). Only that `initialize` runs before the
 * connection is named.
 */
export class ConnectionName {
  private named: string | undefined;
  private readonly waiting: Array<(id: string) => void> = [];

  /** Names the connection, once; what waited for the id runs now, in order. */
  name(id: string): void {
    if (this.named !== undefined) throw new Error(`connection ${this.named} is already named`);
    this.named = id;
    for (const use of this.waiting.splice(0)) use(id);
  }

  /** The id, for what runs after `initialize` (every request but `initialize` does). */
  get id(): string {
    if (this.named === undefined) throw new Error("the connection is not named yet: only initialize comes before its id");
    return this.named;
  }

  /** Runs `use` with the id now, or once the connection is named (what `initialize` logs, the connection's start). */
  whenNamed(use: (id: string) => void): void {
    if (this.named === undefined) this.waiting.push(use);
    else use(this.named);
  }
}
