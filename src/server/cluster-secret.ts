import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The header a host presents the cluster secret in when it relays a client's request to a peer. */
const SECRET_HEADER = "berth-cluster-secret";
/** The header naming the host that relays: a relayed request is answered where it lands, never relayed again. */
export const RELAYED_BY_HEADER = "berth-relayed-by";

/** What a request says of the cluster: nothing (a client), a peer with the right secret, or a peer refused. */
export type PeerPresence = { readonly kind: "none" } | { readonly kind: "peer"; readonly hostId: string } | { readonly kind: "refused" };

/**
 * The secret the hosts of a fleet share (config `fleet.secret`, env `BERTH_CLUSTER_SECRET`): what a
 * host presents when it relays a client's ACP or REST request to the session's owner, and what the
 * owner checks (in constant time) before it lets the request in. It is never logged.
 */
export class ClusterSecret {
  private readonly secret: Buffer | undefined;
  /** What a presented secret is compared with: digests are all one length, so the comparison tells nothing of the secret's. */
  private readonly digest: Buffer | undefined;

  constructor(secret: string | undefined) {
    this.secret = secret === undefined ? undefined : Buffer.from(secret);
    this.digest = secret === undefined ? undefined : sha256(secret);
  }

  /** Whether this host relays to its peers and lets relayed requests in. */
  get configured(): boolean {
    return this.secret !== undefined;
  }

  /**
   * A request presenting the secret or naming a relaying host is a peer's: let in only with the right
   * secret and a host id; a wrong or missing secret is refused (401), whatever token it also carries.
   */
  presence(req: IncomingMessage): PeerPresence {
    const presented = headerOf(req, SECRET_HEADER);
    const hostId = headerOf(req, RELAYED_BY_HEADER);
    if (presented === undefined && hostId === undefined) return { kind: "none" };
    if (presented === undefined || hostId === undefined || hostId === "" || !this.matches(presented)) return { kind: "refused" };
    return { kind: "peer", hostId };
  }

  /** The headers of a request this host (`selfId`) relays to a peer. */
  headers(selfId: string): Record<string, string> {
    if (!this.secret) throw new Error("no cluster secret is set: nothing is relayed");
    return { [SECRET_HEADER]: this.secret.toString(), [RELAYED_BY_HEADER]: selfId };
  }

  private matches(presented: string): boolean {
    return this.digest !== undefined && timingSafeEqual(sha256(presented), this.digest);
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}
