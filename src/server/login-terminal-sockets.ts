import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import type { Logger } from "../host/logger.js";
import type { LoginAttachment, LoginRunner, WindowSize } from "../host/views.js";
import type { ClientBufferBudget } from "./client-buffer-budget.js";
import { HttpError } from "./http-io.js";
import { decodeSegment } from "./router.js";
import { keepAlive } from "./socket-keepalive.js";

/** `/api/agents/:id/logins/:method/terminal`: an agent's terminal login over a WebSocket. */
const PATH = /^\/api\/agents\/([^/]+)\/logins\/([^/]+)\/terminal$/;
/** Keys and control messages are small; a paste of a long token is still well under this. */
const MAX_CLIENT_MESSAGE_BYTES = 64 * 1024;
const DEFAULT_SIZE: WindowSize = { cols: 80, rows: 24 };

/** The agent and method a login terminal's path names; undefined for any other path; a 400 `HttpError` for malformed percent-encoding. */
export function loginTerminalPath(pathname: string): { readonly agentId: string; readonly methodId: string } | undefined {
  const match = PATH.exec(pathname);
  return match ? { agentId: decodeSegment(match[1]!), methodId: decodeSegment(match[2]!) } : undefined;
}

/**
 * Clients' WebSockets on agents' terminal logins, upgraded once the HTTP server let them in. Output goes out as binary
 * frames (the screen so far first); binary frames in are keys, text frames in are JSON: `{"type":"input","data"}` or
 * `{"type":"resize","cols","rows"}`. The last frame out is `{"type":"exit","exitCode","signal"}`, then close 1000.
 * Each client's queue counts in the host's client buffer budget: one with more than its share unread is cut (the login
 * runs on, and a client that comes back is sent its screen).
 */
export class LoginTerminalSockets {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES, clientTracking: false });
  private readonly sockets = new Set<WebSocket>();

  constructor(
    private readonly runner: LoginRunner,
    private readonly budget: ClientBufferBudget,
    private readonly log: Logger,
  ) {}

  /** Attaches to (or starts) the login, then completes the upgrade; a login that cannot be had is an HTTP refusal. */
  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const { agentId, methodId } = loginTerminalPath(url.pathname)!;
    const size = initialSize(url);
    const attachment = await this.runner.attach(agentId, methodId, size);
    // The client may have given up while the login started; ws answers a bad handshake itself and never calls back.
    // Either way the attachment must not stay behind, holding the login open.
    if (socket.destroyed) return attachment.detach();
    const failed = () => attachment.detach();
    socket.once("close", failed);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      socket.off("close", failed);
      this.serve(ws, attachment);
    });
  }

  /** Closes every login WebSocket (1008, `reason`); the logins run on for their grace period. */
  disconnectAll(reason: string): void {
    for (const ws of this.sockets) ws.close(1008, reason);
  }

  close(): void {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
  }

  private serve(ws: WebSocket, attachment: LoginAttachment): void {
    const { agentId, methodId } = attachment;
    this.sockets.add(ws);
    const leave = this.budget.join(ws);
    ws.once("close", () => {
      this.sockets.delete(ws);
      leave();
      attachment.detach();
    });
    keepAlive(ws, () => this.log.warn({ agentId, methodId }, "login terminal client disconnected: it answered no ping"));
    const send = (data: Buffer | string) => {
      if (ws.readyState !== ws.OPEN) return;
      // A client that stopped reading must not pile the login's output up in the host's memory.
      if (ws.bufferedAmount > this.budget.shareBytes) {
        this.budget.reached();
        this.log.warn({ agentId, methodId, buffered: ws.bufferedAmount }, "login terminal client disconnected: too far behind its output");
        ws.terminate();
        return;
      }
      ws.send(data);
    };
    if (attachment.screen.length > 0) send(attachment.screen);
    attachment.onOutput(send);
    void attachment.exited.then(({ exitCode, signal }) => {
      send(JSON.stringify({ type: "exit", exitCode, signal }));
      ws.close(1000, "the login ended");
    });
    ws.on("message", (data: RawData, isBinary: boolean) => {
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      if (isBinary) return attachment.write(bytes);
      const refusal = this.control(attachment, bytes.toString("utf8"));
      if (refusal) ws.send(JSON.stringify({ type: "error", message: refusal }));
    });
  }

  /** Carries out a text frame's message; what was wrong with it otherwise. */
  private control(attachment: LoginAttachment, text: string): string | undefined {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return `a text frame is a JSON message ({"type":"input","data":"…"} or {"type":"resize","cols":…,"rows":…}), got ${JSON.stringify(text.slice(0, 80))}`;
    }
    const { type, data, cols, rows } = (typeof message === "object" && message !== null ? message : {}) as Record<string, unknown>;
    if (type === "input" && typeof data === "string") return void attachment.write(data);
    if (type !== "resize") return `unknown message: a text frame's "type" is "input" (with a string "data") or "resize", got ${JSON.stringify(type)}`;
    const size = windowSizeOf(cols, rows);
    if (typeof size === "string") return size;
    attachment.resize(size).catch((error: unknown) => this.log.warn({ agentId: attachment.agentId, err: error }, "login terminal resize failed"));
    return undefined;
  }
}

/** The size a client asks the login to start at (`?cols=&rows=`, default 80×24). */
function initialSize(url: URL): WindowSize {
  const cols = url.searchParams.get("cols");
  const rows = url.searchParams.get("rows");
  if (cols === null && rows === null) return DEFAULT_SIZE;
  const size = windowSizeOf(Number(cols ?? DEFAULT_SIZE.cols), Number(rows ?? DEFAULT_SIZE.rows));
  if (typeof size === "string") throw new HttpError(400, "invalid_size", size);
  return size;
}

/** A size from a client, checked: whole numbers from 1 to 1000; what is wrong with it otherwise. */
function windowSizeOf(cols: unknown, rows: unknown): WindowSize | string {
  const valid = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= 1000;
  if (!valid(cols) || !valid(rows))
    return `a terminal size is whole numbers of columns and rows from 1 to 1000, got cols ${String(cols)} and rows ${String(rows)}`;
  return { cols, rows };
}
