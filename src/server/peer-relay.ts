import { client, methods, RequestError, type AuthenticateRequest, type ClientConnection, type InitializeRequest } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import type { Logger } from "../host/logger.js";
import type { ClusterSecret } from "./cluster-secret.js";
import type { PeerHost } from "./peer-route.js";
import { keepAlive, PING_INTERVAL_MS } from "./socket-keepalive.js";

/** The longest the relay stops reading from an owner for a client that is behind, at a time (well within a ping interval). */
const MAX_HOLD_MS = 1_000;
/** An owner that accepts the TCP connection but does not complete the WebSocket handshake in this long is taken as gone. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

export interface PeerRelayOptions {
  readonly cluster: ClusterSecret;
  /** The agent the client's connection named (`/acp?agent=ID`), named the same way to the owner. */
  readonly agentId: string | undefined;
  readonly log: Logger;
  /** Passes a notification of the owner (a `session/update`, a replay) to the client. */
  readonly notify: (method: string, params: unknown) => void | Promise<void>;
  /** Puts a request of the owner (a permission question, a file read, a terminal) to the client; its answer or error goes back. */
  readonly ask: (method: string, params: unknown, signal: AbortSignal) => Promise<unknown>;
}

/**
 * The ACP connections one client connection of this host has opened to the owners of the sessions it
 * uses (docs/fleet.md, "Routing"): one per owner host, opened at the first request for one of its
 * sessions (authenticated by a proof of the cluster secret, initialized as the client initialized this
 * host, then logged in to the agent as the client last did here) and reused for every later one.
 * Requests go to the owner unchanged and its answers and errors come back unchanged; its notifications
 * and requests go to the client. Closing the client's connection closes them all, so the owner releases
 * every hold it took for this client, as it would for a client of its own.
 */
export class PeerRelay {
  private readonly upstreams = new Map<string, Upstream>();
  private initializeRequest: InitializeRequest | undefined;
  private login: AuthenticateRequest | undefined;
  private closed = false;

  constructor(private readonly options: PeerRelayOptions) {}

  /** What the client sent in `initialize`: each connection to an owner starts the same way (capabilities, client info, `_meta`). */
  initialized(request: InitializeRequest): void {
    this.initializeRequest = request;
  }

  /**
   * An `authenticate` the agent accepted here: the owners' agents need it too (as this host's later children
   * get it), so it goes to every owner connected now and follows `initialize` on every later one.
   */
  authenticated(request: AuthenticateRequest): void {
    this.login = request;
    for (const upstream of this.upstreams.values()) upstream.authenticate(request);
  }

  /** Puts the client's request to the owner; its answer or error (code, data, `_meta` intact), or a clear error if the owner is unreachable. */
  async request(owner: PeerHost, method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const upstream = this.upstreamOf(owner);
    const connection = await upstream.usable();
    try {
      return await connection.agent.request(method, params, { cancellationSignal: signal });
    } catch (error) {
      if (error instanceof RequestError) throw error;
      throw unreachable(owner, upstream.lostReason ?? error);
    }
  }

  /** Passes the client's notification (`session/cancel`, an extension's) to the owner. */
  async notify(owner: PeerHost, method: string, params: unknown): Promise<void> {
    const connection = await this.upstreamOf(owner).usable();
    await connection.agent.notify(method, params);
  }

  /** The client left: every connection to an owner closes, and the owners release what this client held there. */
  close(): void {
    this.closed = true;
    for (const upstream of this.upstreams.values()) upstream.close();
    this.upstreams.clear();
  }

  private upstreamOf(owner: PeerHost): Upstream {
    if (this.closed) throw RequestError.internalError({ code: "connection_closed" }, "the client's connection is closed");
    const open = this.upstreams.get(owner.id);
    if (open && open.url === owner.url) return open;
    open?.close();
    const upstream = new Upstream(owner, this.options, this.initializeRequest);
    if (this.login) upstream.authenticate(this.login);
    this.upstreams.set(owner.id, upstream);
    upstream.gone.then(() => {
      if (this.upstreams.get(owner.id) === upstream) this.upstreams.delete(owner.id);
    });
    return upstream;
  }
}

/** One ACP connection to an owner host, as a client of it: used from its `initialize` until it is gone (closed with its client, or the owner went away). */
class Upstream {
  readonly url: string;
  private readonly ready: Promise<ClientConnection>;
  /** The client's logins sent here, in order: a request waits for them, so the owner's agent never sees it before the login. */
  private loggedIn: Promise<void> = Promise.resolve();
  /** Settles when the connection is gone, whatever the cause. */
  readonly gone: Promise<void>;
  /** Why it went, when the owner stopped answering pings. */
  lostReason: Error | undefined;
  private readonly connection: ClientConnection;
  private socket: WebSocket | undefined;
  /** Notifications passed on while the client is behind and not caught up yet: while any is, nothing is read from the owner. */
  private behind = 0;
  /** When reading from the owner last resumed (`performance.now()`). */
  private resumedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly owner: PeerHost,
    private readonly options: PeerRelayOptions,
    initializeRequest: InitializeRequest | undefined,
  ) {
    this.url = owner.url;
    const capture = (socket: WebSocket) => {
      this.socket = socket;
      // From the first moment it is open: a request (initialize included) must not wait on a paused owner.
      socket.once("open", () =>
        keepAlive(
          socket,
          () => {
            this.lostReason = new Error(`it answered no ping for ${PING_INTERVAL_MS / 1000} s`);
          },
          // A pong left unread while reads were held back says nothing of the owner.
          () => this.behind > 0 || performance.now() - this.resumedAt < PING_INTERVAL_MS,
        ),
      );
      socket.once("unexpected-response", (_request, response) => {
        this.lostReason = new Error(
          response.statusCode === 401
            ? `it refused this host's proof of the cluster secret (401): every host of the fleet needs the same fleet.secret, and clocks within a minute of each other`
            : `it answered the connection with HTTP ${response.statusCode}`,
        );
        socket.terminate();
      });
    };
    const acpUrl = acpUrlOf(owner.url, options.agentId);
    const stream = createWebSocketStream(acpUrl.toString(), {
      WebSocket: capturingWebSocket(capture) as never,
      headers: options.cluster.headers(owner, "relay", "GET", `${acpUrl.pathname}${acpUrl.search}`),
      cookies: "omit",
    });
    this.connection = client({ name: "berth-relay" })
      .onNotification("*", ({ method, params }) => this.passOn(method, params))
      .onRequest("*", ({ method, params, signal }) => options.ask(method, params, signal))
      .connect(stream);
    this.gone = this.connection.closed.then(() => {
      options.log.info({ owner: owner.id, url: owner.url, reason: this.lostReason?.message }, "relay connection to the owner host closed");
    });
    this.ready = this.initialize(initializeRequest);
    this.ready.catch(() => undefined);
  }

  /** The connection, once initialized and logged in as the client is. */
  async usable(): Promise<ClientConnection> {
    const connection = await this.ready;
    await this.loggedIn;
    return connection;
  }

  /**
   * Sends the client's `authenticate` after everything sent before. The owner refusing it is logged, not thrown: its
   * agent then answers the client's next request with its own error, as it would a client of its own.
   */
  authenticate(request: AuthenticateRequest): void {
    const send = async () => {
      const connection = await this.ready;
      await connection.agent.request(methods.agent.authenticate, request);
    };
    this.loggedIn = this.loggedIn.then(send).catch((error: unknown) => {
      if (error instanceof RequestError)
        this.options.log.warn(
          { owner: this.owner.id, methodId: request.methodId, code: error.code },
          "the owner host refused the client's authenticate",
        );
    });
  }

  close(): void {
    this.connection.close();
  }

  /**
   * Passes an owner's notification to the client. While the client is behind, nothing more is read from the owner:
   * the owner's own pacing (a `session/load` replay waits for a slow client) then sees this client, and what the
   * client has not read piles up nowhere but in the sockets' buffers.
   */
  private passOn(method: string, params: unknown): void {
    const caughtUp = this.options.notify(method, params);
    if (!(caughtUp instanceof Promise)) return;
    if (this.behind++ === 0) this.socket?.pause();
    // Held at most a moment at a time: the owner's pings are read (and answered) even while the client stays behind,
    // or the owner would take this connection for dead; what comes meanwhile pauses reading again.
    let timer: NodeJS.Timeout | undefined;
    const moment = new Promise<void>((resolve) => (timer = setTimeout(resolve, MAX_HOLD_MS)));
    void Promise.race([caughtUp, moment]).then(() => {
      clearTimeout(timer);
      if (--this.behind > 0) return;
      this.resumedAt = performance.now();
      this.socket?.resume();
    });
  }

  private async initialize(request: InitializeRequest | undefined): Promise<ClientConnection> {
    try {
      await this.connection.agent.request(methods.agent.initialize, request ?? { protocolVersion: 1, clientCapabilities: {} });
    } catch (error) {
      this.close();
      throw unreachable(this.owner, this.lostReason ?? error);
    }
    return this.connection;
  }
}

/** The owner could not be reached, or went away with the request in flight: the client is told which host, never left waiting. */
function unreachable(owner: PeerHost, cause: unknown): RequestError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return RequestError.internalError(
    { code: "owner_host_unreachable", host: owner.id, url: owner.url },
    `the session's owner host "${owner.id}" (${owner.url}) could not be reached or went away: ${reason}`,
  );
}

/** `http://host:port` (the URL a host registered) as its ACP WebSocket endpoint. */
function acpUrlOf(url: string, agentId: string | undefined): URL {
  const acp = new URL("acp", url.endsWith("/") ? url : `${url}/`);
  acp.protocol = acp.protocol === "https:" ? "wss:" : "ws:";
  if (agentId !== undefined) acp.searchParams.set("agent", agentId);
  return acp;
}

/** The `ws` constructor with a handshake timeout, handing each socket it makes to `capture` (for pings and the refusal's status). */
function capturingWebSocket(capture: (socket: WebSocket) => void) {
  return class extends WebSocket {
    constructor(address: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
      super(address, protocols, { ...options, handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
      capture(this);
    }
  };
}
