import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Host } from "../host/host.js";
import type { AllowedHost } from "../config/allowed-hosts.js";
import { berthCommand, currentInvocation } from "../config/invocation.js";
import type { Logger } from "../host/logger.js";
import { AcpEndpoint } from "./acp-endpoint.js";
import { ClientBufferBudget } from "./client-buffer-budget.js";
import type { Access } from "./access.js";
import { fetchSiteAllowed, hostAllowed, hostForUrl, originAllowed } from "./auth.js";
import { RELAYED_BY_HEADER, type PeerPurpose } from "./cluster-secret.js";
import { classifyError, type ErrorClass } from "../host/host-errors.js";
import { HttpError, sendError, sendUnauthorized } from "./http-io.js";
import { clearedLoginCookie } from "./login-cookie.js";
import { loginRoutes } from "./login-routes.js";
import { agentLoginRoutes } from "./agent-login-routes.js";
import { BerthMetrics } from "./metrics.js";
import { RefusedConnections } from "./connection-cap.js";
import { requestFailureLine } from "./request-failure.js";
import { OwnSessionEvents } from "./own-session-events.js";
import { PeerLiveFeeds } from "./peer-live-feeds.js";
import { PeerRest } from "./peer-rest.js";
import { restRoutes } from "./rest-routes.js";
import { reviewRoutes } from "./review-routes.js";
import { ChangeStreams } from "./change-streams.js";
import type { BoundListener } from "./listener.js";
import { Router } from "./router.js";
import { OperatorEvents, type OperatorEventsOptions } from "./sse.js";
import { defaultWebDir, StaticFiles } from "./static-files.js";
import { Tickets, type TicketOptions } from "./tickets.js";
import { loginTerminalPath, LoginTerminalSockets } from "./login-terminal-sockets.js";
import { terminalLoginRoutes } from "./terminal-login-routes.js";
import { unauthorizedPage, wantsPage } from "./unauthorized-page.js";

export interface ServerOptions {
  readonly host: Host;
  /** The address it listens on, e.g. `127.0.0.1`. */
  readonly listenHost: string;
  /** The socket already listening there. */
  readonly listener: BoundListener;
  /** The access token and the remembered devices: what lets a request in. */
  readonly access: Access;
  readonly log: Logger;
  /** The built dashboard (default `dist/web/`). */
  readonly webDir?: string;
  /** What prints the dashboard link on the host, named as Berth was started, with no path of this machine (it is shown to anyone who loads a page). */
  readonly tokenLinkCommand?: string;
  /** ACP messages larger than this are refused with a JSON-RPC error. */
  readonly maxMessageBytes?: number;
  readonly maxBufferedBytes?: number;
  /** How long a Streamable HTTP client may have no request and no event stream open before it counts as gone. */
  readonly httpClientIdleMs?: number;
  readonly events?: OperatorEventsOptions;
  /** Names of a reverse proxy in front of Berth, allowed as `Host` and as pages' origins. */
  readonly allowedHosts?: readonly AllowedHost[];
  /** The lifetime and clock of the tickets for event streams and WebSockets (tests shorten them). */
  readonly tickets?: TicketOptions;
  /** Open connections beyond which a new one is closed at once (`server.maxConnections`). */
  readonly maxConnections: number;
  /** How long a connection may take to send a request's headers (`server.headersTimeout`). */
  readonly headersTimeoutMs: number;
}

export interface BerthServer {
  /** `http://127.0.0.1:7420`, with the port really bound. */
  readonly url: string;
  readonly acpUrl: string;
  readonly port: number;
  /** No new connections; those open stay until {@link close}. */
  stopListening(): void;
  /** Ends event streams and closes every client socket with `reason`; once (later calls return the same promise). */
  close(reason?: string): Promise<void>;
}

const statusOf: Readonly<Record<ErrorClass, number>> = { bad_input: 400, not_found: 404, conflict: 409, unavailable: 503, internal: 500 };

/** Berth on the network: REST, Server-Sent Events, metrics, the dashboard and ACP (WebSocket and Streamable HTTP) on one port. */
export async function startServer(options: ServerOptions): Promise<BerthServer> {
  const { host, access, log, allowedHosts = [] } = options;
  const events = new OperatorEvents(host, options.events);
  const { clientBufferBudget, clientHighWater } = host.config.server;
  const clientBuffers = new ClientBufferBudget({ budgetBytes: clientBufferBudget, highWaterBytes: clientHighWater });
  const acp = new AcpEndpoint({
    host,
    log,
    maxMessageBytes: options.maxMessageBytes,
    maxBufferedBytes: options.maxBufferedBytes,
    httpClientIdleMs: options.httpClientIdleMs,
    clientBuffers,
    cluster: access.cluster,
  });
  const metrics = new BerthMetrics(host, () => acp.clientsConnected, clientBuffers);
  const tickets = new Tickets(options.tickets);
  const peers = new PeerRest(host, access.cluster);
  const ownSessions = new OwnSessionEvents(host, options.events?.coalesceMs);
  const loginSockets = new LoginTerminalSockets(host.logins, clientBuffers, log);
  const changeStreams = new ChangeStreams({ read: (sessionId) => host.changes(sessionId), onWorkDone: (listener) => host.onWorkDone(listener) });
  const routes = [
    ...restRoutes({ host, events, ownSessions, metrics, tickets, peers }),
    ...reviewRoutes(host, peers, changeStreams),
    ...loginRoutes(access),
    ...agentLoginRoutes(host),
    ...terminalLoginRoutes(host.logins),
  ];
  const router = new Router(routes);
  // Named from the routes themselves, so that the refusal never lists what a peer may not read, or misses what it may.
  const peerReads = routes
    .filter((route) => route.peers === "read" || route.peers === "live-feed")
    .map((route) => `${route.method} ${route.path}`)
    .join(", ");
  // With a cluster secret, each online peer's own sessions are followed live (docs/fleet.md, "One view").
  const feeds = access.cluster.configured && host.hostId !== null ? new PeerLiveFeeds(host, access.cluster, log) : undefined;
  // A rotated token ends what the old one opened: tickets, event streams (the page reconnects and is refused; a peer
  // reconnects with a fresh proof) and ACP sockets.
  access.token.onRotate(() => {
    tickets.revokeAll();
    events.endStreams();
    ownSessions.endStreams();
    changeStreams.endStreams();
    acp.disconnectAll("the access token was rotated");
    loginSockets.disconnectAll("the access token was rotated");
  });
  const tokenLinkCommand = options.tokenLinkCommand ?? `${berthCommand(currentInvocation(), "page")} token --link`;
  const web = new StaticFiles(options.webDir ?? defaultWebDir, tokenLinkCommand);
  const { port } = options.listener;
  access.port = port;

  /**
   * What every request is refused for before anything else, whatever it asks: a `Host` that is not
   * this machine (DNS rebinding), a browser page of another origin (another port is another site).
   */
  const foreignRefusal = (req: IncomingMessage): HttpError | undefined => {
    const { host: hostHeader, origin } = req.headers;
    if (!hostAllowed(hostHeader, options.listenHost, allowedHosts)) {
      log.warn({ host: hostHeader }, "request for a foreign Host refused (DNS rebinding?)");
      return new HttpError(
        403,
        "forbidden_host",
        `requests for the host name ${JSON.stringify(hostHeader)} are not allowed: use an address of this machine or localhost, or add the name to server.allowedHosts (the serve command's --allowed-host)`,
      );
    }
    if (!originAllowed(origin, hostHeader, allowedHosts)) {
      log.warn({ origin, host: hostHeader }, "request from a foreign origin refused");
      return new HttpError(403, "forbidden_origin", `requests from the origin ${origin} are not allowed`);
    }
    return undefined;
  };

  /** What the API and ACP refuse besides a wrong token: a request a browser made for another site. */
  const crossSiteRefusal = (req: IncomingMessage): HttpError | undefined => {
    const site = req.headers["sec-fetch-site"];
    if (fetchSiteAllowed(site)) return undefined;
    log.warn({ site }, "cross-site request refused");
    return new HttpError(403, "forbidden_site", `requests made by another site's page (Sec-Fetch-Site: ${site}) are not allowed`);
  };

  /**
   * 401: `{"error":"unauthorized"}` for scripts; for a person's browser opening the address, a page
   * saying how to get in. A login cookie that let nothing in is dropped from the browser.
   */
  /** A request naming itself a peer's without a valid proof of the cluster secret: refused, and the operator told why. */
  const peerRefused = (req: IncomingMessage): boolean => {
    const reason = access.peerRefusal(req);
    if (reason !== undefined)
      log.warn(
        { relayedBy: req.headers[RELAYED_BY_HEADER], method: req.method, path: requestUrl(req).pathname, reason },
        "peer host's request refused",
      );
    return reason !== undefined;
  };

  const refuseUnauthorized = (req: IncomingMessage, res: ServerResponse): void => {
    if (access.staleCookie(req)) res.setHeader("Set-Cookie", clearedLoginCookie(access.port));
    if (!wantsPage(req)) return sendUnauthorized(res);
    res.writeHead(401, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", ...PAGE_HEADERS });
    res.end(unauthorizedPage(tokenLinkCommand));
  };

  const respond = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // No other origin may read or embed anything Berth answers, even where no token is needed.
    res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
    res.setHeader("X-Content-Type-Options", "nosniff");
    const foreign = foreignRefusal(req);
    if (foreign) throw foreign;
    const url = requestUrl(req);
    const match = router.match(req.method ?? "GET", url.pathname);
    const isPublic = match.name === "route" && match.route.public === true;
    const isApi = match.name !== "none" || url.pathname === "/acp" || url.pathname === "/api" || url.pathname.startsWith("/api/");
    // The dashboard's files are code without data, public so that no credential is ever kept in a cookie.
    if (isApi && !isPublic) {
      const crossSite = crossSiteRefusal(req);
      if (crossSite) throw crossSite;
      if (peerRefused(req)) return refuseUnauthorized(req, res);
      // A ticket stands in for the token only where a browser cannot send a header: the event streams.
      const ticketed = req.method === "GET" && isEventStream(url.pathname) && tickets.redeem(url.searchParams.get("ticket"));
      const grant = ticketed ? undefined : access.grant(req);
      if (!ticketed && !grant) return refuseUnauthorized(req, res);
      // The cluster secret lets a peer relay its clients' requests for this host's sessions, and nothing more.
      if (grant?.kind === "peer") {
        const opens = url.pathname === "/acp" ? "relay" : match.name === "route" ? match.route.peers : undefined;
        const refusal = peerRouteRefusal(grant.purpose, opens, `${req.method} ${url.pathname}`, peerReads);
        if (refusal) throw refusal;
      }
    }
    if (match.name !== "none") return router.run(match, req, res, url);
    if (url.pathname === "/acp") {
      const unknown = acp.unknownAgent(url);
      if (unknown) throw unknown;
      return acp.handleRequest(req, res);
    }
    if (isApi) throw new HttpError(404, "not_found", `no route ${req.method} ${url.pathname}`);
    if (req.method !== "GET")
      throw new HttpError(405, "method_not_allowed", `${req.method} is not allowed on ${url.pathname} (the dashboard is read with GET)`);
    const file = web.resolve(url.pathname);
    web.send(res, file, file.name === "index" ? PAGE_HEADERS : {});
  };

  const server: Server = createServer(connectionTimeouts(options.headersTimeoutMs), (req, res) => {
    respond(req, res).catch((error: unknown) => {
      const httpError = error instanceof HttpError ? error : fromHostError(error);
      // A client that went away mid-request (a dropped body) is not Berth failing.
      if (clientWentAway(req, error))
        log.info({ method: req.method, path: requestUrl(req).pathname }, "client went away before its request was complete");
      else {
        const line = requestFailureLine(error, httpError);
        if (line) log[line.level]({ err: error, method: req.method, path: requestUrl(req).pathname }, line.msg);
      }
      if (res.headersSent || res.destroyed) return void res.destroy();
      sendError(res, httpError);
    });
  });

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node hands the socket over with no error listener; until ws adds its own (a login may start first), an error must not end the host.
    socket.on("error", () => socket.destroy());
    try {
      upgrade(req, socket, head);
    } catch (error) {
      const httpError = error instanceof HttpError ? error : fromHostError(error);
      if (httpError.status >= 500) log.error({ err: error, path: req.url }, "WebSocket upgrade failed");
      refuseUpgrade(socket, httpError.status, { error: httpError.code, message: httpError.message });
    }
  });

  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = requestUrl(req);
    const login = loginTerminalPath(url.pathname);
    const refusal = foreignRefusal(req) ?? (url.pathname === "/acp" || login ? crossSiteRefusal(req) : undefined);
    if (refusal) return refuseUpgrade(socket, refusal.status, { error: refusal.code, message: refusal.message });
    if (url.pathname !== "/acp" && !login)
      return refuseUpgrade(socket, 404, {
        error: "not_found",
        message: `no WebSocket endpoint at ${url.pathname} (ACP is at /acp, agents' terminal logins at /api/agents/:id/logins/:method/terminal)`,
      });
    const grant = peerRefused(req) ? undefined : tickets.redeem(url.searchParams.get("ticket")) ? ({ kind: "ticket" } as const) : access.grant(req);
    if (!grant) return refuseUpgrade(socket, 401, { error: "unauthorized" });
    if (login) {
      // A peer relays ACP and sessions' routes only: a login runs on the host the client reached.
      if (grant.kind === "peer") return refuseUpgrade(socket, 403, { error: "not_relayed", message: "a peer host does not relay terminal logins" });
      return void loginSockets.handleUpgrade(req, socket, head, url).catch((error: unknown) => {
        const httpError = error instanceof HttpError ? error : fromHostError(error);
        if (httpError.status >= 500 && httpError.code !== "shutting_down")
          log.error({ err: error, path: url.pathname }, "terminal login failed to start");
        refuseUpgrade(socket, httpError.status, { error: httpError.code, message: httpError.message });
      });
    }
    const wrongPurpose = grant.kind === "peer" ? peerRouteRefusal(grant.purpose, "relay", "the ACP WebSocket", peerReads) : undefined;
    if (wrongPurpose) return refuseUpgrade(socket, wrongPurpose.status, { error: wrongPurpose.code, message: wrongPurpose.message });
    const unknown = acp.unknownAgent(url);
    if (unknown) return refuseUpgrade(socket, unknown.status, { error: unknown.code, message: unknown.message });
    acp.handleUpgrade(req, socket, head, url, grant.kind === "peer" ? grant.hostId : undefined);
  }

  // The socket was bound before the host started (its port goes into fleet.url): the HTTP server takes its connections.
  // Node's HTTP server tracks its connections (closeAllConnections at stop, the header and request timeouts) from its
  // `listening` event on: it never listens itself, so it is told.
  server.emit("listening");
  const refused = new RefusedConnections(log, options.maxConnections);
  options.listener.limitConnections(options.maxConnections, () => refused.refused());
  options.listener.attach((socket) => server.emit("connection", socket));
  const base = `${hostForUrl(options.listenHost)}:${port}`;
  log.info({ host: options.listenHost, port }, "server listening");

  let closing: Promise<void> | undefined;
  const close = async (reason: string) => {
    options.listener.close();
    refused.close();
    server.close();
    feeds?.close();
    events.close();
    ownSessions.close();
    changeStreams.close();
    loginSockets.close();
    await acp.close(reason);
    metrics.close();
    server.closeAllConnections();
  };
  return {
    url: `http://${base}`,
    acpUrl: `ws://${base}/acp`,
    port,
    stopListening: () => {
      options.listener.close();
      server.close();
      feeds?.close();
    },
    // Once: a second call waits for the first; after a failure, a later call tries again.
    close: (reason = "Berth is shutting down") =>
      (closing ??= close(reason).catch((error: unknown) => {
        closing = undefined;
        throw error;
      })),
  };
}

/** A request's whole body (an ACP message of up to 8 MiB from a slow link) must have arrived within this. */
const REQUEST_TIMEOUT_MS = 120_000;

/**
 * A connection that sends no complete request headers within `headersTimeoutMs` is answered 408 and closed:
 * a slow client cannot keep its slot under `server.maxConnections` for Node's default minute. Node looks
 * at its connections' deadlines every `connectionsCheckingInterval` (30 s by default): every second here.
 */
function connectionTimeouts(headersTimeoutMs: number) {
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: Math.max(REQUEST_TIMEOUT_MS, headersTimeoutMs),
    connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs),
  };
}

/**
 * The dashboard page: never framed by another page (its controls cannot be overlaid), scripts and
 * connections from Berth only, and the `?token=` it was opened with sent to nobody as a referrer.
 */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
};

function clientWentAway(req: IncomingMessage, error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return (
    (req.destroyed && !req.complete) || code === "ECONNRESET" || code === "ECONNABORTED" || (error instanceof Error && error.message === "aborted")
  );
}

function fromHostError(error: unknown): HttpError {
  const classified = classifyError(error);
  return new HttpError(statusOf[classified.class], classified.code, classified.message, classified.details);
}

function requestUrl(req: IncomingMessage): URL {
  // Only the path and query matter; the Host header is not trusted for anything.
  return new URL(req.url ?? "/", "http://berth.invalid");
}

function refuseUpgrade(socket: Duplex, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const reason =
    {
      400: "Bad Request",
      401: "Unauthorized",
      403: "Forbidden",
      404: "Not Found",
      409: "Conflict",
      501: "Not Implemented",
      503: "Service Unavailable",
    }[status] ?? "Error";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** Why a peer's proof for `purpose` does not open `what` (a route open to peers for `opens`, or to none); undefined if it does. */
function peerRouteRefusal(purpose: PeerPurpose, opens: PeerPurpose | undefined, what: string, peerReads: string): HttpError | undefined {
  if (opens === purpose) return undefined;
  if (opens === undefined)
    return new HttpError(403, "not_relayed", `a peer host relays only ACP and a session's REST routes, and reads only ${peerReads}, not ${what}`);
  return new HttpError(403, "not_relayed", `a peer host's proof for "${purpose}" does not open ${what}, which needs one for "${opens}"`);
}

/** The routes an EventSource opens (with a ticket: it cannot send the token in a header). */
function isEventStream(pathname: string): boolean {
  return pathname === "/api/events" || /^\/api\/sessions\/[^/]+\/changes\/events$/.test(pathname);
}
