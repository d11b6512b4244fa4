import { randomUUID } from "node:crypto";
import type { AgentApp } from "@agentclientprotocol/sdk";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { createAcpAgent } from "./acp-agent.js";

/** Sends a notification; a promise when the client is behind, settled once it caught up (see MessageLimitedSocket). */
type Notify = (method: string, params: unknown) => void | Promise<void>;

export interface ConnectionOptions {
  /** `websocket` or `http`, for the logs. */
  readonly transport: string;
  /** The agent the connection named (`/acp?agent=ID`). */
  readonly agentId?: string;
  /** A transport's own fast path for updates; without one they go through the SDK connection. */
  readonly notify?: Notify;
}

/**
 * The ACP client connections of both profiles: each gets its own agent app and connection
 * id, and its holds are released when the SDK closes it, whatever the cause (a closed
 * socket, `DELETE /acp`, a limit, shutdown).
 */
export class AcpConnections {
  private readonly open = new Set<string>();

  constructor(
    private readonly host: Host,
    private readonly log: Logger,
  ) {}

  /** Connections that completed `initialize` and are not closed yet. */
  get size(): number {
    return this.open.size;
  }

  /** A new connection's agent app, and the id its holds go by. */
  create({ transport, agentId, notify }: ConnectionOptions): { connectionId: string; agent: AgentApp } {
    const { host, log } = this;
    const connectionId = randomUUID();
    let viaConnection: Notify | undefined;
    const app = createAcpAgent({ host, connectionId, agentId, log, notify: notify ?? ((method, params) => viaConnection?.(method, params)) });
    // The SDK connects the app after `initialize`, before it routes any later message: no update can come earlier.
    app.onConnect((connection) => {
      // A notification to a connection that has just closed has nobody to reach.
      viaConnection = (method, params) => void connection.client.notify(method, params).catch(() => undefined);
      this.open.add(connectionId);
      log.info({ connectionId, transport, agent: agentId }, "client connected");
      void connection.closed.then(() => {
        this.open.delete(connectionId);
        log.info({ connectionId, transport }, "client disconnected");
        return host.connections.cleanupForConnection(connectionId);
      });
    });
    return { connectionId, agent: app };
  }
}
