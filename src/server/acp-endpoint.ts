import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { AcpServer, DEFAULT_MAX_BUFFERED_BYTES } from "@agentclientprotocol/sdk/experimental/server";
import { WebSocketServer, type WebSocket } from "ws";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { createAcpAgent } from "./acp-agent.js";
import { MessageLimitedSocket } from "./message-limited-socket.js";

export interface AcpEndpointOptions {
  readonly host: Host;
  readonly log: Logger;
  /** Larger ACP messages are answered with a JSON-RPC error (default 8 MiB). */
  readonly maxMessageBytes?: number;
  /** A client with more unsent bytes than this is disconnected (default: the SDK's 64 MiB). */
  readonly maxBufferedBytes?: number;
}

export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** How long closing clients get to finish the close handshake before their sockets are cut. */
const CLOSE_WAIT_MS = 1_000;

/**
 * `GET /acp`: ACP v1 over WebSocket. Each socket gets its own agent app and connection id;
 * its close releases every hold the connection took.
 */
export class AcpEndpoint {
  private readonly acp: AcpServer;
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();
  private readonly maxMessageBytes: number;

  constructor(private readonly options: AcpEndpointOptions) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    // Every upgrade passes its own agent (see handleUpgrade); this default is never used.
    this.acp = new AcpServer({
      createAgent: () => {
        throw new Error("ACP connections are accepted through AcpEndpoint.handleUpgrade only");
      },
    });
    // Messages up to 4× the limit are read and refused politely; beyond that ws closes the socket (1009).
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.maxMessageBytes * 4, clientTracking: false });
  }

  get clientsConnected(): number {
    return this.sockets.size;
  }

  /** Completes an upgrade the HTTP server already authorized. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req));
  }

  /** Closes every client socket with `reason`, waiting briefly for each to go. */
  async close(reason: string): Promise<void> {
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

  private accept(ws: WebSocket, req: IncomingMessage): void {
    const { host, log } = this.options;
    const connectionId = randomUUID();
    this.sockets.add(ws);
    log.info({ connectionId, remote: req.socket.remoteAddress }, "client connected");
    ws.once("close", (code, reason) => {
      this.sockets.delete(ws);
      log.info({ connectionId, code, reason: reason.toString() }, "client disconnected");
      void host.connections.cleanupForConnection(connectionId);
    });
    const limited = new MessageLimitedSocket(
      ws,
      { maxMessageBytes: this.maxMessageBytes, maxBufferedBytes: this.options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES },
      (size) => log.warn({ connectionId, size, limit: this.maxMessageBytes }, "oversized ACP message refused"),
      (buffered) => log.warn({ connectionId, buffered }, "client disconnected: too far behind the stream"),
    );
    const notify = (method: string, params: unknown) => limited.notify(method, params);
    const upgrade = this.acp.prepareWebSocketUpgrade({ createAgent: () => createAcpAgent({ host, connectionId, log, notify }) });
    upgrade.accept(limited);
  }
}
