import type { IncomingMessage } from "node:http";
import type { Host } from "../host/host.js";
import type { SessionView } from "../host/views.js";
import { HttpError } from "./http-io.js";
import type { PeerRest } from "./peer-rest.js";
import type { Reply, Route } from "./router.js";

/** A session's route answered on this host, the session's owner: its id, the path's other segments, the query and the body read. */
interface OwnedRequest<B> {
  readonly id: string;
  readonly params: Readonly<Record<string, string>>;
  readonly url: URL;
  readonly body: B;
}

interface SessionRouteSpec<B> {
  readonly method: Route["method"];
  /** Starts `/api/sessions/:id`. */
  readonly path: string;
  /** The request's body, read and checked before the session is looked up (a bad body is a 400 wherever the session runs); relayed as it is. */
  readonly body?: (req: IncomingMessage) => Promise<B>;
  readonly answer: (request: OwnedRequest<B>) => Reply | Promise<Reply>;
}

/**
 * A route on one known session, relayed to the host that owns it in a fleet (docs/fleet.md, "Routing") and answered here
 * otherwise: one shape for every such route, so each says only what it reads and how this host answers.
 */
export function sessionRoute<B = undefined>(host: Host, peers: PeerRest, spec: SessionRouteSpec<B>): Route {
  return {
    method: spec.method,
    path: spec.path,
    peers: "relay",
    handle: async ({ req, url, params }) => {
      const body = spec.body ? await spec.body(req) : (undefined as B);
      const id = params.id!;
      requireSession(host, id);
      const owner = peers.ownerFor(id, req);
      if (owner) return peers.relay(owner, req, url, body);
      return spec.answer({ id, params, url, body });
    },
  };
}

export function requireSession(host: Host, id: string): SessionView {
  const session = host.getSession(id);
  if (!session) throw new HttpError(404, "session_not_found", `no session "${id}"`);
  return session;
}
