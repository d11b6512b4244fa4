import type { WebSocketLike } from "@agentclientprotocol/sdk/experimental/ws-client";
import type { RawData, WebSocket } from "ws";
import { nestedDeeperThan, requestIdOf, tooDeepError } from "./json-nesting.js";
import { MAX_ID_LENGTH, overlongIdRefusal } from "../protocol/id-limits.js";
import { notificationFrame } from "./shared-frames.js";
import type { ClientBufferBudget } from "./client-buffer-budget.js";
import type { ClientQueue } from "./session-feed.js";

type Listener = (...args: unknown[]) => void;

const DEFAULT_DRAIN_TIMEOUT_MS = 60_000;
/** How often a sender waiting for a slow client looks whether it caught up to the quarter mark. */
const DRAIN_POLL_MS = 50;

/**
 * The client socket as the ACP transport sees it, with these differences:
 * - a message larger than `limit` never reaches the transport: a request gets a JSON-RPC error
 *   naming the size and the limit, anything else is dropped, and the connection carries on;
 * - a request whose session id or request id is longer than {@link MAX_ID_LENGTH} gets the JSON-RPC
 *   error {@link overlongIdRefusal} gives on every transport instead of the SDK closing the whole connection;
 * - a message nesting objects and arrays deeper than the limit never reaches the transport (walking it
 *   would overflow the stack): a request gets -32600 naming the limit, anything else is dropped;
 * - a binary frame closes the socket (1003: ACP frames are text), and so does a first frame that is
 *   not a JSON object (1002, after a JSON-RPC error): a socket that cannot be speaking ACP is not
 *   left open.
 */
export class MessageLimitedSocket implements WebSocketLike, ClientQueue {
  private readonly wrapped = new Map<Listener, Listener>();
  private corked = false;
  private firstFrame = true;
  /** Settles once the client caught up (or was cut); undefined while it is not behind. */
  private catchingUp: Promise<void> | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly limits: {
      readonly maxMessageBytes: number;
      readonly maxBufferedBytes: number;
      /** How long a sender may wait for the client to catch up before it is cut (default 60 s). */
      readonly drainTimeoutMs?: number;
      /** What every client's queue may hold together; without one, a client's room is never short. */
      readonly budget?: ClientBufferBudget;
    },
    private readonly onOversized: (size: number) => void,
    private readonly onStalled: (buffered: number) => void,
    private readonly onTooDeep: () => void,
  ) {}

  get readyState(): number {
    return this.ws.readyState;
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /**
   * Frames sent in one turn of the event loop leave in one write: a streaming turn sends
   * thousands of small updates, and a system call per frame would cost more than the frame.
   */
  send(data: string): void {
    // `_socket` is ws's underlying TCP socket; cork/uncork only batch writes, they never drop any.
    const socket = (this.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (socket && !this.corked) {
      this.corked = true;
      socket.cork();
      // After this turn's promise work too: the session feed sends each update a microtask after the last.
      setImmediate(() => {
        this.corked = false;
        socket.uncork();
      });
    }
    this.ws.send(data);
  }

  /**
   * Sends a JSON-RPC notification straight to the socket, beside the SDK's own writer: used for
   * `session/update`, the hot path, whose order among itself is kept by the caller. Once the
   * client is behind (a quarter of the limit buffered), answers a promise that settles when it
   * caught up: a sender that can wait (a journal replay) awaits it; a live stream goes on.
   */
  notify(method: string, params: unknown, frame?: string): Promise<void> | undefined {
    if (this.ws.readyState !== this.ws.OPEN) return undefined;
    // A client that stopped reading (a laptop asleep, TCP not yet dead) must not pile a whole stream up in
    // the host's memory: it is disconnected, as the SDK does with its own writes; its holds are released.
    if (this.ws.bufferedAmount > this.limits.maxBufferedBytes) {
      this.onStalled(this.ws.bufferedAmount);
      // A closing handshake would wait on the very reads that stopped: the connection is cut.
      this.ws.terminate();
      return undefined;
    }
    this.send(frame ?? notificationFrame(method, params));
    return this.ws.bufferedAmount > this.drainedBelow ? this.drained() : undefined;
  }

  /**
   * Resolves once what is buffered for the client is down to a quarter of the limit, or the socket
   * closed. A client that reads nothing for `drainTimeoutMs` (a peer gone without closing) is cut.
   */
  drained(): Promise<void> {
    // Every sender behind shares one wait (a relay passes on many notifications before it stops reading).
    this.catchingUp ??= this.below(this.drainedBelow, this.limits.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS).finally(
      () => (this.catchingUp = undefined),
    );
    return this.catchingUp;
  }

  /** Whether less than the client's share of the budget is queued for it (or its socket is closed: nothing will be). */
  hasRoom(): boolean {
    if (this.ws.readyState !== this.ws.OPEN || this.ws.bufferedAmount < this.share) return true;
    this.limits.budget?.reached();
    return false;
  }

  /**
   * Resolves once half the client's share is left queued, or the socket closed. No deadline of its own: a client that
   * reads nothing at all answers no ping either, and the keepalive cuts it.
   */
  roomAgain(): Promise<void> {
    return this.below(this.share / 2);
  }

  /** What may be queued for the client: its share of the budget, and never near the limit it is cut at. */
  private get share(): number {
    return Math.min(this.limits.budget?.shareBytes ?? Number.POSITIVE_INFINITY, this.drainedBelow);
  }

  behind(): () => void {
    return this.limits.budget?.behind() ?? (() => undefined);
  }

  /** Resolves once at most `bytes` are buffered for the client or the socket closed; cut after `cutAfterMs` without. */
  private below(bytes: number, cutAfterMs?: number): Promise<void> {
    const socket = (this.ws as unknown as { _socket?: NodeJS.EventEmitter })._socket;
    if (!socket || this.ws.readyState !== this.ws.OPEN || this.ws.bufferedAmount <= bytes) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(stalled);
        clearInterval(poll);
        socket.off("drain", check);
        this.ws.off("close", done);
        resolve();
      };
      const check = (): void => {
        if (this.ws.readyState !== this.ws.OPEN || this.ws.bufferedAmount <= bytes) done();
      };
      const stalled =
        cutAfterMs === undefined
          ? undefined
          : setTimeout(() => {
              this.onStalled(this.ws.bufferedAmount);
              this.ws.terminate();
              done();
            }, cutAfterMs);
      // `drain` comes only once the buffer is empty: at the mark the sender may go on (a relay reads its
      // owner again, so the owner's pings are answered), so the amount is looked at in between too.
      const poll = setInterval(check, DRAIN_POLL_MS);
      socket.on("drain", check);
      this.ws.on("close", done);
    });
  }

  private get drainedBelow(): number {
    return this.limits.maxBufferedBytes / 4;
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
      if (isBinary === true) return this.ws.close(1003, "ACP messages are text frames");
      const size = byteLength(data as RawData);
      const text = textOf(data as RawData);
      const limit = this.limits.maxMessageBytes;
      if (size > limit) {
        this.onOversized(size);
        const message = `Invalid request: the message is ${size} bytes, more than the limit of ${limit} bytes`;
        return this.refuse(text, { code: -32600, message, data: { size, limit } });
      }
      if (nestedDeeperThan(text)) {
        this.onTooDeep();
        return this.refuse(text, tooDeepError());
      }
      const first = this.firstFrame;
      this.firstFrame = false;
      // Only a message this long can carry an overlong id: shorter ones are not parsed twice.
      if (!first && size <= MAX_ID_LENGTH) return listener(data, isBinary);
      const parsed = parseMessage(text);
      if (first && (parsed === undefined || typeof parsed !== "object" || parsed === null || Array.isArray(parsed))) {
        const error =
          parsed === undefined
            ? { code: -32700, message: "Parse error: the first message is not JSON" }
            : { code: -32600, message: "Invalid request: the first message must be an initialize request" };
        this.ws.send(JSON.stringify({ jsonrpc: "2.0", id: null, error }));
        return this.ws.close(1002, "the first message must be an ACP initialize request");
      }
      if (parsed !== undefined && this.refuseLongIds(parsed)) return;
      return listener(data, isBinary);
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

  /** Answers (a request) or drops (anything else) a message with an id the SDK would close the connection for. */
  private refuseLongIds(message: unknown): boolean {
    const refusal = overlongIdRefusal(message);
    if (refusal === undefined) return false;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (method !== undefined && id !== undefined) this.ws.send(JSON.stringify({ jsonrpc: "2.0", id: refusal.id, error: refusal.error }));
    return true;
  }

  /** Answers a refused request with `error` under its own id (null if unreadable); drops anything else. */
  private refuse(text: string, error: { code: number; message: string; data: unknown }): void {
    const id = requestIdOf(text);
    if (id === undefined) return;
    this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, error }));
  }
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((total, part) => total + part.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString("utf8");
}

function parseMessage(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
