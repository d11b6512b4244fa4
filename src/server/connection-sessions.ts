import type { AgentContext, ClientCapabilities } from "@agentclientprotocol/sdk";
import type { Host } from "../host/host.js";
import { classifyError } from "../host/host-errors.js";
import type { Logger } from "../host/logger.js";
import type { CleanupRegistration } from "../host/views.js";
import type { ConnectionName } from "./connection-name.js";
import { SessionFeed, type ClientQueue } from "./session-feed.js";
import type { ClientNotify } from "./shared-frames.js";

interface OpenSession {
  readonly feed: SessionFeed;
  readonly registration: CleanupRegistration;
  readonly leave: () => void;
}

/**
 * The sessions one client connection holds. Opening one registers its cleanup with the
 * host *before* awaiting the agent child, so a socket that closes mid-acquisition still
 * lets go; the connection's close runs every cleanup at once.
 */
export class ConnectionSessions {
  private readonly open = new Map<string, OpenSession>();
  constructor(
    private readonly host: Host,
    private readonly connection: ConnectionName,
    private readonly log: Logger,
    private readonly notify: ClientNotify,
    /** The client's queue, which paces its feeds (WebSocket clients). */
    private readonly queue: ClientQueue | undefined,
  ) {}

  /** This connection as a holder of its sessions (sessions open only once the connection is named). */
  get holderId(): string {
    return `acp:${this.connection.id}`;
  }

  /** Holds the session for this connection, feeds it (replaying the journal if asked) and waits for its agent. */
  async hold(sessionId: string, client: AgentContext, capabilities: ClientCapabilities, { replay }: { replay: boolean }): Promise<void> {
    const { host } = this;
    let ticket: { release(): boolean } | undefined;
    let feed: SessionFeed | undefined;
    const leave = () => {
      ticket?.release();
      feed?.close();
      if (this.open.get(sessionId)?.leave === leave) this.open.delete(sessionId);
    };
    // Replaces (and runs) the cleanup of an earlier hold of this session by this connection.
    const registration = host.connections.register(`${this.holderId}:${sessionId}`, leave, this.connection.id);
    try {
      const held = host.hold(sessionId, this.holderId);
      ticket = held;
      feed = new SessionFeed({
        host,
        sessionId,
        holderId: this.holderId,
        client,
        capabilities,
        log: this.log,
        notify: this.notify,
        ...(this.queue ? { queue: this.queue } : {}),
      });
      this.open.set(sessionId, { feed, registration, leave });
      await feed.start({ replay });
      await held.child;
    } catch (error) {
      // Only this registration's own cleanup: a newer hold of the same session stays.
      if (registration.releaseIfCurrent()) leave();
      throw error;
    }
  }

  /**
   * Settles once everything journaled for the session so far is committed and sent to this connection; if the store
   * cannot write, after `writeTimeout` with what it committed: the rest reaches this connection live once stored.
   */
  async delivered(sessionId: string): Promise<void> {
    try {
      await this.host.committedWithin(`the history of session "${sessionId}"`, "the client is sent it once it is stored");
    } catch (error) {
      if (classifyError(error).code !== "store_unavailable") throw error;
      this.log.warn({ sessionId, connectionId: this.connection.id, err: error }, "session opened before its history was stored");
    }
    await this.open.get(sessionId)?.feed.delivered();
  }

  /** `session/close`: this connection lets go; the session and its other holders stay. */
  release(sessionId: string): boolean {
    const entry = this.open.get(sessionId);
    if (!entry?.registration.releaseIfCurrent()) return false;
    entry.leave();
    return true;
  }

  /** The sessions this connection holds, most recently opened last. */
  openIds(): string[] {
    return [...this.open.keys()];
  }

  feedOf(sessionId: string): SessionFeed | undefined {
    return this.open.get(sessionId)?.feed;
  }
}
