import type { IncomingMessage } from "node:http";
import type { Host } from "../host/host.js";
import type { ClusterSecret } from "./cluster-secret.js";
import { HttpError } from "./http-io.js";
import { causeOf, readPeers, type PeerReads } from "./peer-reads.js";
import { routeOf, type PeerHost } from "./peer-route.js";
import { empty, type Reply } from "./router.js";

/** A relayed REST request the owner has not answered within this long is answered 504 here. */
const RELAY_TIMEOUT_MS = 30_000;
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
    return readPeers(this.host, this.cluster, path, valid);
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
          ...this.cluster.headers(owner, "relay", req.method ?? "GET", `${target.pathname}${target.search}`),
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
