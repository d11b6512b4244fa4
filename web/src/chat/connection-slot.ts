import type { ClientConnection } from "@agentclientprotocol/sdk";
import { retriableImport } from "../chunk-import.js";
import type { AcpLinkHandlers } from "./acp-link.js";

/** The ACP SDK and the link: a chunk of their own, loaded once the page holds a session (reading needs neither). */
const importAcpLink = retriableImport(() => import("./acp-link.js"));

/** `empty`: no connection (none opened yet, or it was closed or lost); `open`: the chat's current one. */
type Slot = { readonly name: "empty" } | { readonly name: "open"; readonly connection: ClientConnection };

/**
 * The chat's one ACP connection to Berth at a time (acp-link.ts opens it): a new one replaces the
 * last, and the current one closing by itself (Berth gone, the network down) is told once.
 */
export class ConnectionSlot {
  private slot: Slot = { name: "empty" };

  /** `handlers`: the link's; `lost`: the current connection closed without the page closing it. */
  constructor(
    private readonly handlers: AcpLinkHandlers,
    private readonly lost: () => void,
  ) {}

  /** The current connection, if there is one. */
  get current(): ClientConnection | null {
    return this.slot.name === "open" ? this.slot.connection : null;
  }

  /** Opens a connection in place of the current one (closed first), loading the link's chunk the first time. */
  async open(): Promise<ClientConnection> {
    this.close();
    const { connectAcp } = await importAcpLink();
    const connection = await connectAcp(this.handlers);
    this.slot = { name: "open", connection };
    void connection.closed.then(() => {
      if (this.current !== connection) return;
      this.slot = { name: "empty" };
      this.lost();
    });
    return connection;
  }

  /** Closes the current connection, if any; its closing is not told as a loss. */
  close(): void {
    const connection = this.current;
    this.slot = { name: "empty" };
    connection?.close();
  }
}
