import type { AgentApp, AgentConnection } from "@agentclientprotocol/sdk";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { createAcpAgent } from "./acp-agent.js";
import type { ClusterSecret } from "./cluster-secret.js";
import { ConnectionName } from "./connection-name.js";
import type { ClientQueue } from "./session-feed.js";
import type { ClientNotify } from "./shared-frames.js";

/** Sends a notification; a promise when the client is behind, settled once it caught up (see MessageLimitedSocket). */

export interface ConnectionOptions {
  /** `websocket` or `http`, for the logs. */
  readonly transport: string;
  /** The agent the connection named (`/acp?agent=ID`). */
  readonly agentId?: string;
  /** A transport's own fast path for updates; without one they go through the SDK connection. */
  readonly notify?: ClientNotify;
  /** The client's queue, which paces what its session feeds send. */
  readonly queue?: ClientQueue;
  /** The peer host that relayed this connection (authenticated by the cluster secret). */
  readonly relayedBy?: string;
  /** The host's base URL as the client reached it. */
  readonly baseUrl?: string;
}

/**
 * The ACP client connections of both profiles: each gets its own agent app, named by the
 * connection id its client got, and its holds are released when the SDK closes it, whatever the cause (a closed
 * socket, `DELETE /acp`, a limit, shutdown).
 */
export class AcpConnections {
  /** By connection id. */
  private readonly open = new Map<string, AgentConnection>();
  /** Prompts not answered yet, of every connection. */
  private readonly prompting = new Set<Promise<unknown>>();

  constructor(
    private readonly host: Host,
    private readonly log: Logger,
    private readonly cluster?: ClusterSecret,
  ) {}

  /** Connections that completed `initialize` and are not closed yet. */
  get size(): number {
    return this.open.size;
  }

  /**
   * A new connection's agent app, and how the transport names it with the id the SDK gave it (`Acp-Connection-Id`),
   * which its holds and log lines go by.
   */
  create({ transport, agentId, notify, queue, relayedBy, baseUrl }: ConnectionOptions): { agent: AgentApp; name(id: string): void } {
    const { host, log } = this;
    const connection = new ConnectionName();
    let viaConnection: ClientNotify | undefined;
    const app = createAcpAgent({
      host,
      connection,
      agentId,
      log,
      notify: notify ?? ((method, params) => viaConnection?.(method, params)),
      ...(queue ? { queue } : {}),
      promptStarted: (answered) => this.trackPrompt(answered),
      cluster: this.cluster,
      relayedBy,
      baseUrl,
    });
    // The SDK connects the app after `initialize`, before it routes any later message: no update can come earlier.
    app.onConnect((sdkConnection) => {
      // A notification to a connection that has just closed has nobody to reach.
      viaConnection = (method, params) => void sdkConnection.client.notify(method, params).catch(() => undefined);
      // Over Streamable HTTP the connection is named once its `initialize` answer is out of the SDK, just after this.
      connection.whenNamed((connectionId) => {
        this.open.set(connectionId, sdkConnection);
        log.info({ connectionId, transport, agent: agentId, ...(relayedBy ? { relayedBy } : {}) }, "client connected");
        void sdkConnection.closed.then(() => {
          this.open.delete(connectionId);
          log.info({ connectionId, transport }, "client disconnected");
          return host.connections.cleanupForConnection(connectionId);
        });
      });
    });
    return { agent: app, name: (id) => connection.name(id) };
  }

  /** Whether the connection completed `initialize` and is not closed yet. */
  has(connectionId: string): boolean {
    return this.open.has(connectionId);
  }

  /** Closes a connection whose client is gone (quiet past `idleMs` over Streamable HTTP): its holds are released. */
  closeGone(connectionId: string, idleMs: number): void {
    const connection = this.open.get(connectionId);
    if (!connection) return;
    this.log.warn({ connectionId, idleMs }, "client gone: no request or event stream open");
    connection.close();
  }

  /**
   * Settles once every running prompt has been answered and the answers handed to the sockets, or after
   * `withinMs`: a stopping server closes the sockets only then, so a turn that shutdown ended reaches its client.
   */
  async promptsAnswered(withinMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)));
    await Promise.race([Promise.allSettled([...this.prompting]), bound]);
    clearTimeout(timer);
    // The SDK writes an answer through its stream a few microtasks and at most a turn of the loop later.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private trackPrompt(answered: Promise<unknown>): void {
    this.prompting.add(answered);
    const settled = () => void this.prompting.delete(answered);
    answered.then(settled, settled);
  }
}
