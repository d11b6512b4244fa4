import { PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { WebSocket } from "ws";

const CHUNK = Buffer.from('"agent_message_chunk"');

/**
 * A client of one session for the fan-out figures: a bare WebSocket speaking JSON-RPC by hand that counts the chunk
 * frames it receives without parsing them. A hundred SDK clients in the benchmark's process validate every message,
 * and that cost, not the host's, set the figure.
 */
export class BareWatcher {
  chunks = 0;
  private readonly waiting = new Map<number, (message: { error?: unknown }) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data: Buffer) => {
      if (this.waiting.size === 0) {
        if (data.indexOf(CHUNK) !== -1) this.chunks++;
        return;
      }
      const message = JSON.parse(data.toString()) as { id?: number; error?: unknown };
      if (message.id !== undefined) this.waiting.get(message.id)?.(message);
    });
  }

  /** Initialized and resumed on `sessionId`. */
  static async open(acpUrl: string, token: string, sessionId: string, cwd: string): Promise<BareWatcher> {
    const ws = new WebSocket(acpUrl, { headers: { authorization: `Bearer ${token}` } });
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    const watcher = new BareWatcher(ws);
    await watcher.request(1, "initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    await watcher.request(2, "session/resume", { sessionId, cwd, mcpServers: [] });
    return watcher;
  }

  reset(): void {
    this.chunks = 0;
  }

  close(): void {
    this.ws.close();
  }

  private async request(id: number, method: string, params: object): Promise<void> {
    const answer = await new Promise<{ error?: unknown }>((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
    this.waiting.delete(id);
    if (answer.error !== undefined) throw new Error(`${method} refused: ${JSON.stringify(answer.error)}`);
  }
}
