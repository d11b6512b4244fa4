import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { AgentApp } from "@agentclientprotocol/sdk";
import { createNodeHttpHandler } from "@agentclientprotocol/sdk/experimental/node";
import { AcpServer, DEFAULT_MAX_BUFFERED_BYTES, type HandleRequestOptions } from "@agentclientprotocol/sdk/experimental/server";
import { WebSocketServer, type WebSocket } from "ws";
import { UnknownAgentError } from "../host/host-errors.js";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { type JsonRpcErrorObject, MAX_ID_LENGTH, overlongIdError, overlongIdRefusal } from "../protocol/id-limits.js";
import { AcpConnections } from "./acp-connections.js";
import { RELAYED_BY_HEADER, type ClusterSecret } from "./cluster-secret.js";
import { HttpError, sendJson } from "./http-io.js";
import { MAX_JSON_DEPTH, nestedDeeperThan, requestIdOf, tooDeepError } from "./json-nesting.js";
import type { ClientBufferBudget } from "./client-buffer-budget.js";
import { MessageLimitedSocket } from "./message-limited-socket.js";
import { DEFAULT_HTTP_CLIENT_IDLE_MS, HttpClientPresence } from "./http-client-presence.js";
import type { ClientQueue } from "./session-feed.js";
import type { ClientNotify } from "./shared-frames.js";
import { keepAlive } from "./socket-keepalive.js";

export interface AcpEndpointOptions {
  readonly host: Host;
  readonly log: Logger;
  /** Larger ACP messages are answered with a JSON-RPC error (default 8 MiB). */
  readonly maxMessageBytes?: number;
  /** A client with more unsent bytes than this is disconnected (default: the SDK's 64 MiB). */
  readonly maxBufferedBytes?: number;
  /** What every WebSocket client's queue may hold together (`server.clientBufferBudget`, `server.clientHighWater`). */
  readonly clientBuffers: ClientBufferBudget;
  /** The fleet's secret: requests for another host's sessions are relayed to it. */
  readonly cluster?: ClusterSecret;
  /** How long a Streamable HTTP client may have no request and no event stream open before it counts as gone (60 s). */
  readonly httpClientIdleMs?: number;
}

const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** How long closing clients get to finish the close handshake before their sockets are cut. */
const CLOSE_WAIT_MS = 1_000;
/** The header both profiles of the transport name their connection with. */
const CONNECTION_ID_HEADER = "Acp-Connection-Id";
/** The header the Streamable HTTP profile names a session's stream and messages with. */
const SESSION_ID_HEADER = "Acp-Session-Id";

/** The agent a client named on the endpoint's URL (`/acp?agent=ID`); the host's default when absent. */
function requestedAgent(url: URL): string | undefined {
  return url.searchParams.get("agent") ?? undefined;
}

/**
 * `/acp`: ACP v1 over both profiles of the Streamable HTTP & WebSocket transport, through
 * the SDK's `AcpServer`. A WebSocket upgrade, or a Streamable HTTP `initialize` POST, opens
 * a connection with its own agent app and connection id; its end releases every hold it took.
 */
export class AcpEndpoint {
  private readonly acp: AcpServer;
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();
  private readonly connections: AcpConnections;
  private readonly maxMessageBytes: number;
  private readonly handleHttp: (req: IncomingMessage, res: ServerResponse) => void;
  private readonly presence: HttpClientPresence;

  constructor(private readonly options: AcpEndpointOptions) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.connections = new AcpConnections(options.host, options.log, options.cluster);
    const idleMs = options.httpClientIdleMs ?? DEFAULT_HTTP_CLIENT_IDLE_MS;
    this.presence = new HttpClientPresence(idleMs, (connectionId) => this.connections.closeGone(connectionId, idleMs));
    // The HTTP server let a request naming a relaying host in only with the cluster secret.
    this.acp = new PerRequestAgentServer(
      (url, relayedBy) => {
        const opened = this.connections.create({ transport: "http", agentId: requestedAgent(url), relayedBy, baseUrl: url.origin });
        return {
          agent: opened.agent,
          name: (connectionId) => {
            opened.name(connectionId);
            // Its idle clock starts with its `initialize` answered: a client that never comes back is gone after it.
            this.presence.opened(connectionId)();
          },
        };
      },
      {
        maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
      },
    );
    this.handleHttp = createNodeHttpHandler(this.acp, { maxRequestBodyBytes: this.maxMessageBytes });
    // Messages up to 4× the limit are read and refused politely; beyond that ws closes the socket (1009).
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.maxMessageBytes * 4, clientTracking: false });
  }

  /** ACP connections of both profiles that completed `initialize`. */
  get clientsConnected(): number {
    return this.connections.size;
  }

  /** 400 naming the configured agents when `?agent=` names none of them. */
  unknownAgent(url: URL): HttpError | undefined {
    const agentId = requestedAgent(url);
    const known = this.options.host.agents();
    if (agentId === undefined || known.includes(agentId)) return undefined;
    return new HttpError(400, "unknown_agent", new UnknownAgentError(agentId, known).message);
  }

  /** Streamable HTTP (`POST`, `GET` event streams, `DELETE`) on a request the HTTP server already authorized. */
  handleRequest(req: IncomingMessage, res: ServerResponse): void {
    this.watchPresence(req, res);
    const declared = Number(req.headers["content-length"]);
    // Without a usable length (a chunked body), the SDK counts the bytes as they come and answers 413 itself.
    if (!(declared > this.maxMessageBytes)) return this.handleHttp(req, res);
    // The id is in the body we refuse to read; the SDK's client gives this error to the request it sent.
    const message = `Invalid request: the message is ${declared} bytes, more than the limit of ${this.maxMessageBytes} bytes`;
    sendJson(
      res,
      413,
      { jsonrpc: "2.0", id: null, error: { code: -32600, message, data: { size: declared, limit: this.maxMessageBytes } } },
      { Connection: "close" },
    );
  }

  /**
   * Completes a WebSocket upgrade the HTTP server already authorized, naming the connection on the 101 response;
   * `relayedBy` names the peer host that relayed it (its requests are answered here, never relayed on).
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, relayedBy?: string): void {
    let limited: MessageLimitedSocket | undefined;
    const notify: ClientNotify = (method, params, frame) => limited?.notify(method, params, frame);
    // Feeds exist only after `initialize`, on the upgraded socket.
    const queue: ClientQueue = {
      hasRoom: () => limited?.hasRoom() ?? true,
      roomAgain: () => limited?.roomAgain() ?? Promise.resolve(),
      behind: () => limited?.behind() ?? (() => undefined),
    };
    const baseUrl = req.headers.host ? `http://${req.headers.host}` : undefined;
    const opened = this.connections.create({
      transport: "websocket",
      agentId: requestedAgent(url),
      notify,
      queue,
      relayedBy,
      baseUrl,
    });
    const upgrade = this.acp.prepareWebSocketUpgrade({ agent: opened.agent });
    // Before any message: the logs name the connection by the id its 101 response gives the client.
    const { connectionId } = upgrade;
    opened.name(connectionId);
    const nameConnection = (headers: string[], request: IncomingMessage) => {
      if (request === req) headers.push(`${CONNECTION_ID_HEADER}: ${connectionId}`);
    };
    // ws answers a bad handshake itself and never calls back: the prepared connection must not stay behind.
    const failed = () => {
      this.wss.off("headers", nameConnection);
      upgrade.reject();
    };
    this.wss.on("headers", nameConnection);
    socket.once("close", failed);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.wss.off("headers", nameConnection);
      socket.off("close", failed);
      limited = this.limit(ws, connectionId);
      const leave = this.options.clientBuffers.join(ws);
      ws.once("close", leave);
      // A client (a relaying peer host above all) gone silent must not keep its holds here for ever.
      keepAlive(ws, () => this.options.log.warn({ connectionId, relayedBy }, "client disconnected: it answered no ping"));
      this.sockets.add(ws);
      ws.once("close", () => this.sockets.delete(ws));
      upgrade.accept(limited);
    });
  }

  /** Closes every client WebSocket (1008, `reason`) and keeps serving: the access that opened them was withdrawn. */
  disconnectAll(reason: string): void {
    for (const ws of this.sockets) ws.close(1008, reason);
  }

  /** Lets running prompts' answers out (briefly), closes every client socket with `reason`, waiting briefly for each to go, then every HTTP connection. */
  async close(reason: string): Promise<void> {
    this.presence.close();
    await this.connections.promptsAnswered(CLOSE_WAIT_MS);
    const closed = [...this.sockets].map(
      (ws) =>
        new Promise<void>((resolve) => {
          ws.once("close", () => resolve());
          ws.close(1001, reason);
          setTimeout(() => {
            ws.terminate();
            resolve();
          }, CLOSE_WAIT_MS).unref();
        }),
    );
    await Promise.all(closed);
    await this.acp.close();
    this.wss.close();
  }

  /** A request or event stream of an open connection keeps its client present while it lasts (`DELETE` ends the watch). */
  private watchPresence(req: IncomingMessage, res: ServerResponse): void {
    const connectionId = req.headers[CONNECTION_ID_HEADER.toLowerCase()];
    if (typeof connectionId !== "string" || !this.connections.has(connectionId)) return;
    if (req.method === "DELETE") {
      this.presence.forget(connectionId);
      return;
    }
    res.once("close", this.presence.opened(connectionId));
  }

  private limit(ws: WebSocket, connectionId: string): MessageLimitedSocket {
    const { log } = this.options;
    return new MessageLimitedSocket(
      ws,
      {
        maxMessageBytes: this.maxMessageBytes,
        maxBufferedBytes: this.options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
        budget: this.options.clientBuffers,
      },
      (size) => log.warn({ connectionId, size, limit: this.maxMessageBytes }, "oversized ACP message refused"),
      (buffered) => log.warn({ connectionId, buffered }, "client disconnected: too far behind the stream"),
      () => log.warn({ connectionId, limit: MAX_JSON_DEPTH }, "ACP message nested too deep refused"),
    );
  }
}

/** A new connection's agent app, named once the SDK gave the connection its id. */
interface OpenedConnection {
  readonly agent: AgentApp;
  name(id: string): void;
}

/**
 * The SDK's server, giving each Streamable HTTP connection the agent its `initialize`
 * request asks for (the SDK's Node adapter passes only the request), named with the
 * `Acp-Connection-Id` its answer gives the client (or, if it gives none, an id of Berth's own).
 */
class PerRequestAgentServer extends AcpServer {
  constructor(
    private readonly agentFor: (url: URL, relayedBy: string | undefined) => OpenedConnection,
    limits: { readonly maxBufferedBytes: number },
  ) {
    super({
      ...limits,
      createAgent: () => {
        throw new Error("every ACP connection is given its own agent");
      },
    });
  }

  override async handleRequest(req: Request, options?: HandleRequestOptions): Promise<Response> {
    const refused = await refusalOf(req);
    if (refused) return refused;
    if (options) return super.handleRequest(req, options);
    // Only an `initialize` opening a connection creates an agent.
    let opened: OpenedConnection | undefined;
    const response = await super.handleRequest(req, {
      createAgent: () => (opened = this.agentFor(new URL(req.url), req.headers.get(RELAYED_BY_HEADER) ?? undefined)).agent,
    });
    // An `initialize` the SDK failed (the client gave up: 499; its own 500) is answered without an id, the connection
    // dropped: it is named all the same, so what its `initialize` left waiting for the id (a log line) still runs.
    opened?.name(response.headers.get(CONNECTION_ID_HEADER) ?? randomUUID());
    return response;
  }
}

/**
 * What the SDK would answer with a bare `400 text/plain` ("Invalid JSON", "… exceeds maxIdLength"),
 * answered as JSON-RPC errors a client can tell apart: a body that is not JSON (-32700), an
 * overlong request or session id as {@link overlongIdRefusal} answers it on every transport. A body nested
 * deeper than {@link MAX_JSON_DEPTH} gets -32600 with its id (the SDK would walk it and overflow the stack). A session
 * stream (GET) for an overlong session id is refused with 409, which the SDK's client takes as
 * that session failing rather than the whole connection. Nothing here touches the connection.
 */
async function refusalOf(req: Request): Promise<Response | undefined> {
  const sessionHeader = req.headers.get(SESSION_ID_HEADER);
  if (req.method !== "POST") {
    if (sessionHeader === null || sessionHeader.length <= MAX_ID_LENGTH) return undefined;
    return jsonRpcError(req.method === "GET" ? 409 : 400, null, overlongIdError("session id", sessionHeader.length));
  }
  const text = await req.clone().text();
  if (nestedDeeperThan(text)) return jsonRpcError(400, requestIdOf(text) ?? null, tooDeepError());
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch (error) {
    // The SDK decodes bodies as UTF-8, replacing what is not: a replacement character or a NUL means bytes, not text.
    const binary = text.includes("\uFFFD") || text.includes("\0");
    const why = binary ? "is binary data, not JSON" : `is not valid JSON (${(error as Error).message})`;
    return jsonRpcError(400, null, { code: -32700, message: `Parse error: the request body ${why}` });
  }
  const refusal = overlongIdRefusal(message, sessionHeader?.length ?? 0);
  return refusal && jsonRpcError(400, refusal.id, refusal.error);
}

function jsonRpcError(status: number, id: unknown, error: JsonRpcErrorObject): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id, error }), { status, headers: { "Content-Type": "application/json" } });
}
