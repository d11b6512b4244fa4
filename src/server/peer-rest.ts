import type { IncomingMessage } from "node:http";
import type { Host } from "../host/host.js";
import type { ClusterSecret } from "./cluster-secret.js";
import { HttpError } from "./http-io.js";
import { routeOf, type PeerHost } from "./peer-route.js";
import { empty, type Reply } from "./router.js";

/** A relayed REST request the owner has not answered within this long is answered 504 here. */
const RELAY_TIMEOUT_MS = 30_000;
/** A fleet-wide read waits this long for each peer: a slow one is reported as unreachable, not waited for. */
const PEER_READ_TIMEOUT_MS = 3_000;

/** What every online peer answered to a fleet-wide read, and which could not be read (with why). */
export interface PeerReads<T> {
  readonly answers: readonly { readonly host: string; readonly body: T }[];
  readonly unreachable: readonly { readonly host: string; readonly error: string }[];
}

/**
 * REST requests for another host's session, relayed to its owner (docs/fleet.md, "Routing"): the
 * owner's answer is this host's answer, status, body and all. Without a cluster secret, or with the
 * owner offline, the request is answered here (409 `owned_by_other_host` from the host).
 */
export class PeerRest {
  constructor(
    private readonly host: Host,
    private readonly cluster: ClusterSecret,
  ) {}

  /** The owner to relay a request for the session to; undefined when this host answers it. */
  ownerFor(sessionId: string, req: IncomingMessage): PeerHost | undefined {
    const route = routeOf(this.host.sessionOwner(sessionId), { canRelay: this.canRelay(req) });
    return route.kind === "relay" ? route.owner : undefined;
  }

  /**
   * GET `path` at every online peer, in parallel, each within {@link PEER_READ_TIMEOUT_MS}: the fleet-wide
   * reads of the one view (docs/fleet.md). Nothing is read for a request a peer sent here, or without a secret.
   */
  async readPeers<T>(req: IncomingMessage, path: string, valid: (body: unknown) => body is T): Promise<PeerReads<T>> {
    if (!this.canRelay(req)) return { answers: [], unreachable: [] };
    const peers = (this.host.hosts() ?? []).filter((peer) => !peer.self && peer.online && peer.url !== null);
    type Read = { readonly host: string; readonly body: T } | { readonly host: string; readonly error: string };
    const read = async (peer: PeerHost): Promise<Read> => {
      try {
        const target = new URL(path, peer.url);
        const response = await fetch(target, {
          headers: this.cluster.headers(peer.id, "GET", `${target.pathname}${target.search}`),
          signal: AbortSignal.timeout(PEER_READ_TIMEOUT_MS),
          redirect: "manual",
        });
        if (!response.ok) return { host: peer.id, error: `${peer.url} answered ${response.status}` };
        const body: unknown = await response.json();
        return valid(body) ? { host: peer.id, body } : { host: peer.id, error: `${peer.url} answered with something other than ${path}'s answer` };
      } catch (error) {
        return { host: peer.id, error: `${peer.url} could not be reached: ${causeOf(error)}` };
      }
    };
    const results = await Promise.all(peers.map((peer) => read({ id: peer.id, url: peer.url! })));
    return {
      answers: results.flatMap((result) => ("body" in result ? [result] : [])),
      unreachable: results.flatMap((result) => ("error" in result ? [result] : [])),
    };
  }

  /** This host relays and fans out: it has the secret and a host id, and the request did not come from a peer (one hop, never a loop). */
  private canRelay(req: IncomingMessage): boolean {
    return this.cluster.configured && this.host.hostId !== null && this.cluster.presence(req).kind === "none";
  }

  /** The same method, path and query at the owner, with `body` as JSON; its answer, or 502/504 naming the owner. */
  async relay(owner: PeerHost, req: IncomingMessage, url: URL, body?: unknown): Promise<Reply> {
    const target = new URL(`${url.pathname}${url.search}`, owner.url);
    let response: Response;
    try {
      response = await fetch(target, {
        method: req.method,
        headers: {
          ...this.cluster.headers(owner.id, req.method ?? "GET", `${target.pathname}${target.search}`),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(RELAY_TIMEOUT_MS),
        redirect: "manual",
      });
    } catch (error) {
      const timedOut = error instanceof Error && error.name === "TimeoutError";
      throw new HttpError(
        timedOut ? 504 : 502,
        "owner_host_unreachable",
        `the session's owner host "${owner.id}" (${owner.url}) ${timedOut ? `did not answer within ${RELAY_TIMEOUT_MS / 1000} s` : `could not be reached: ${causeOf(error)}`}`,
      );
    }
    if (response.status === 401)
      throw new HttpError(
        502,
        "owner_host_refused",
        `the session's owner host "${owner.id}" (${owner.url}) refused this host's proof of the cluster secret: every host of the fleet needs the same fleet.secret, and clocks within a minute of each other`,
      );
    const text = await response.text();
    if (text === "") return empty(response.status);
    return { kind: "text", status: response.status, contentType: response.headers.get("content-type") ?? "application/json", text };
  }
}

/** The reason a request failed, as the cause says it (fetch wraps the socket's error). */
export function causeOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}
