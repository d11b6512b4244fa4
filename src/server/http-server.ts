import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { AcpEndpoint } from "./acp-endpoint.js";
import { hostForUrl, originAllowed, presentedToken, tokenCookie, tokenMatches } from "./auth.js";
import { classifyError, type ErrorClass } from "./host-errors.js";
import { HttpError, sendError, sendUnauthorized } from "./http-io.js";
import { BerthMetrics } from "./metrics.js";
import { restRoutes } from "./rest-routes.js";
import { Router } from "./router.js";
import { OperatorEvents, type OperatorEventsOptions } from "./sse.js";
import { defaultWebDir, StaticFiles } from "./static-files.js";

export interface ServerOptions {
  readonly host: Host;
  /** The address to listen on, e.g. `127.0.0.1`. */
  readonly listenHost: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly token: string;
  readonly log: Logger;
  /** The built dashboard (default `dist/web/`). */
  readonly webDir?: string;
  /** ACP messages larger than this are refused with a JSON-RPC error. */
  readonly maxMessageBytes?: number;
  readonly maxBufferedBytes?: number;
  readonly events?: OperatorEventsOptions;
}

export interface BerthServer {
  /** `http://127.0.0.1:7420`, with the port really bound. */
  readonly url: string;
  readonly acpUrl: string;
  readonly port: number;
  /** No new connections; those open stay until {@link close}. */
  stopListening(): void;
  /** Ends event streams and closes every client socket with `reason`. */
  close(reason?: string): Promise<void>;
}

export class PortInUseError extends Error {
  override readonly name = "PortInUseError";
}

const statusOf: Readonly<Record<ErrorClass, number>> = { bad_input: 400, not_found: 404, conflict: 409, unavailable: 503, internal: 500 };

/** Berth on the network: REST, Server-Sent Events, metrics, the dashboard and ACP (WebSocket and Streamable HTTP) on one port. */
export async function startServer(options: ServerOptions): Promise<BerthServer> {
  const { host, token, log } = options;
  const events = new OperatorEvents(host, options.events);
  const acp = new AcpEndpoint({ host, log, maxMessageBytes: options.maxMessageBytes, maxBufferedBytes: options.maxBufferedBytes });
  const metrics = new BerthMetrics(host, () => acp.clientsConnected);
  const router = new Router(restRoutes({ host, events, metrics }));
  const web = new StaticFiles(options.webDir ?? defaultWebDir);
  let port = options.port;

  /** What both ACP profiles refuse once the token passed: a foreign page, an unknown agent. */
  const acpRefusal = (req: IncomingMessage, url: URL): HttpError | undefined => {
    const origin = req.headers.origin;
    if (!originAllowed(origin, options.listenHost, port)) {
      log.warn({ origin }, "ACP connection from a foreign origin refused");
      return new HttpError(403, "forbidden_origin", `ACP connections from the origin ${origin} are not allowed`);
    }
    return acp.unknownAgent(url);
  };

  const respond = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = requestUrl(req);
    const match = router.match(req.method ?? "GET", url.pathname);
    const isPublic = match.name === "route" && match.route.public === true;
    if (!isPublic && !tokenMatches(presentedToken(req, url), token)) return sendUnauthorized(res);
    if (match.name !== "none") return router.run(match, req, res, url);
    if (url.pathname === "/acp") {
      const refusal = acpRefusal(req, url);
      if (refusal) throw refusal;
      return acp.handleRequest(req, res);
    }
    if (url.pathname === "/api" || url.pathname.startsWith("/api/")) throw new HttpError(404, "not_found", `no route ${req.method} ${url.pathname}`);
    if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", `${req.method} is not allowed on ${url.pathname} (the dashboard is read with GET)`);
    const file = web.resolve(url.pathname);
    // The page keeps the token for its own requests; its assets carry it as a cookie.
    web.send(res, file, file.name === "index" ? { "Set-Cookie": tokenCookie(token) } : {});
  };

  const server: Server = createServer((req, res) => {
    respond(req, res).catch((error: unknown) => {
      const httpError = error instanceof HttpError ? error : fromHostError(error);
      if (httpError.status >= 500) log.error({ err: error, method: req.method, path: requestUrl(req).pathname }, "request failed");
      if (res.headersSent) return void res.destroy();
      sendError(res, httpError);
    });
  });

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = requestUrl(req);
    if (url.pathname !== "/acp") return refuseUpgrade(socket, 404, { error: "not_found", message: `no WebSocket endpoint at ${url.pathname} (ACP is at /acp)` });
    if (!tokenMatches(presentedToken(req, url), token)) return refuseUpgrade(socket, 401, { error: "unauthorized" });
    const refusal = acpRefusal(req, url);
    if (refusal) return refuseUpgrade(socket, refusal.status, { error: refusal.code, message: refusal.message });
    acp.handleUpgrade(req, socket, head, url);
  });

  try {
    port = await listen(server, options.listenHost, options.port);
  } catch (error) {
    events.close();
    metrics.close();
    throw error;
  }
  const base = `${hostForUrl(options.listenHost)}:${port}`;
  log.info({ host: options.listenHost, port }, "server listening");

  return {
    url: `http://${base}`,
    acpUrl: `ws://${base}/acp`,
    port,
    stopListening: () => void server.close(),
    async close(reason = "Berth is shutting down") {
      server.close();
      events.close();
      await acp.close(reason);
      metrics.close();
      server.closeAllConnections();
    },
  };
}

function fromHostError(error: unknown): HttpError {
  const classified = classifyError(error);
  return new HttpError(statusOf[classified.class], classified.code, classified.message);
}

function requestUrl(req: IncomingMessage): URL {
  // Only the path and query matter; the Host header is not trusted for anything.
  return new URL(req.url ?? "/", "http://berth.invalid");
}

function refuseUpgrade(socket: Duplex, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const reason = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found" }[status] ?? "Error";
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") reject(new PortInUseError(`cannot listen on ${hostForUrl(host)}:${port}: the port is already in use`));
      else reject(new Error(`cannot listen on ${hostForUrl(host)}:${port}: ${error.message}`));
    };
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : port);
    });
  });
}
