import type { IncomingMessage, ServerResponse } from "node:http";
import type { PeerPurpose } from "./cluster-secret.js";
import { HttpError, sendJson } from "./http-io.js";

type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** What a route answers; `undefined` when it wrote the response itself (a stream). */
export type Reply =
  | { readonly kind: "json"; readonly status: number; readonly body: unknown; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: "text"; readonly status: number; readonly contentType: string; readonly text: string }
  | { readonly kind: "empty"; readonly status: number; readonly headers?: Readonly<Record<string, string>> };

interface RouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  /** The `:name` segments of the route's path, decoded. */
  readonly params: Readonly<Record<string, string>>;
}

export interface Route {
  readonly method: Method;
  /** e.g. `/api/sessions/:id/events`. */
  readonly path: string;
  /** Answered without a token (only `/healthz`). */
  readonly public?: boolean;
  /**
   * Open to a peer host presenting a proof of the cluster secret for this purpose (peers get no other route): `relay`, a
   * route a peer relays a client's request to; `read`, one every host reads of its peers to answer for the fleet (`GET
   * /api/locations`); `live-feed`, the owner's own sessions, which every peer follows.
   */
  readonly peers?: PeerPurpose;
  readonly handle: (context: RouteContext) => Reply | undefined | Promise<Reply | undefined>;
}

export const json = (body: unknown, status = 200, headers?: Record<string, string>): Reply => ({
  kind: "json",
  status,
  body,
  ...(headers ? { headers } : {}),
});
export const empty = (status = 204, headers?: Record<string, string>): Reply => ({ kind: "empty", status, ...(headers ? { headers } : {}) });

/** A route for the method and path, another method's route on that path (405), or none. */
export type Match =
  | { readonly name: "route"; readonly route: Route; readonly params: Record<string, string> }
  | { readonly name: "wrong-method"; readonly allowed: readonly Method[] }
  | { readonly name: "none" };

/** A route table matched segment by segment; enough for a dozen fixed routes. */
export class Router {
  constructor(readonly routes: readonly Route[]) {}

  match(method: string, pathname: string): Match {
    const segments = pathname.split("/");
    const allowed: Method[] = [];
    for (const route of this.routes) {
      const params = matchPath(route.path, segments);
      if (!params) continue;
      if (route.method === method) return { name: "route", route, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { name: "wrong-method", allowed } : { name: "none" };
  }

  /** Answers a matched request: the route's reply, or 405 naming the allowed methods. */
  async run(match: Exclude<Match, { name: "none" }>, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (match.name === "wrong-method") {
      throw new HttpError(405, "method_not_allowed", `${req.method} is not allowed on ${url.pathname} (allowed: ${match.allowed.join(", ")})`);
    }
    const reply = await match.route.handle({ req, res, url, params: match.params });
    if (reply) write(res, reply);
  }
}

function matchPath(pattern: string, segments: readonly string[]): Record<string, string> | undefined {
  const parts = pattern.split("/");
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of parts.entries()) {
    const segment = segments[index]!;
    if (part.startsWith(":")) {
      if (segment === "") return undefined;
      params[part.slice(1)] = decodeSegment(segment);
    } else if (part !== segment) {
      return undefined;
    }
  }
  return params;
}

/** A path segment decoded; malformed percent-encoding is a 400 naming the segment. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "invalid_path", `the path segment "${segment}" is not valid percent-encoding`);
  }
}

function write(res: ServerResponse, reply: Reply): void {
  if (reply.kind === "json") return sendJson(res, reply.status, reply.body, { ...reply.headers });
  if (reply.kind === "text") {
    res.writeHead(reply.status, { "Content-Type": reply.contentType, "Content-Length": Buffer.byteLength(reply.text), "Cache-Control": "no-store" });
    res.end(reply.text);
    return;
  }
  res.writeHead(reply.status, { ...reply.headers });
  res.end();
}
