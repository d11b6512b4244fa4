import type { WebSocketLike } from "@agentclientprotocol/sdk/experimental/ws-client";
import type { RawData, WebSocket } from "ws";

type Listener = (...args: unknown[]) => void;

/**
 * The client socket as the ACP transport sees it, with one difference: a message larger
 * than `limit` never reaches the transport. A request gets a JSON-RPC error naming the size
 * and the limit, anything else is dropped, and the connection carries on.
 */
export class MessageLimitedSocket implements WebSocketLike {
  private readonly wrapped = new Map<Listener, Listener>();

  constructor(
    private readonly ws: WebSocket,
    private readonly limit: number,
    private readonly onOversized: (size: number) => void,
  ) {}

  get readyState(): number {
    return this.ws.readyState;
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  send(data: string): void {
    this.ws.send(data);
  }

  close(code?: number, reason?: string): void {
    this.ws.close(code, reason);
  }

  on(type: string, listener: Listener): this {
    if (type !== "message") {
      this.ws.on(type, listener);
      return this;
    }
    const filtered = (data: unknown, isBinary: unknown) => {
      const size = byteLength(data as RawData);
      if (size <= this.limit) return listener(data, isBinary);
      this.onOversized(size);
      this.refuse(data as RawData, size);
    };
    this.wrapped.set(listener, filtered as Listener);
    this.ws.on("message", filtered);
    return this;
  }

  off(type: string, listener: Listener): this {
    this.ws.off(type, this.wrapped.get(listener) ?? listener);
    this.wrapped.delete(listener);
    return this;
  }

  private refuse(data: RawData, size: number): void {
    const id = requestIdOf(data);
    if (id === undefined) return;
    const message = `Invalid request: the message is ${size} bytes, more than the limit of ${this.limit} bytes`;
    this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32600, message, data: { size, limit: this.limit } } }));
  }
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((total, part) => total + part.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

/** The id of a request (so its caller is not left waiting); null if unreadable; undefined for anything that is not a request. */
function requestIdOf(data: RawData): string | number | null | undefined {
  const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as ArrayBuffer).toString("utf8");
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof message !== "object" || message === null || !("method" in message) || !("id" in message)) return undefined;
  const id = (message as { id: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
