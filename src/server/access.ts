import type { IncomingMessage } from "node:http";
import type { AccessToken } from "./access-token.js";
import { presentedToken } from "./auth.js";
import { ClusterSecret, type PeerPurpose } from "./cluster-secret.js";
import type { DeviceLogins } from "./device-logins.js";
import { presentedLoginCookies } from "./login-cookie.js";

/** Who a request is: the token's holder, a device remembered under it, or a peer host relaying a client's request. */
export type Grant =
  | { readonly kind: "token" }
  | { readonly kind: "device"; readonly loginId: string }
  | { readonly kind: "peer"; readonly hostId: string; readonly purpose: PeerPurpose };

/** The page's half of a remembered login, as a header (EventSource and WebSocket, which cannot send one, take a ticket instead). */
const PAGE_SECRET_HEADER = "x-berth-login";

/**
 * What lets a request in: the access token, or a remembered device's two halves (its cookie and
 * its page's secret). `port` is the port Berth listens on, which names the login cookie.
 */
export class Access {
  port = 0;

  constructor(
    readonly token: AccessToken,
    readonly logins: DeviceLogins,
    /** The fleet's shared secret: a peer host's relayed requests get in with it (none set: no peer gets in). */
    readonly cluster: ClusterSecret = new ClusterSecret(undefined),
  ) {
    // Whatever was remembered under the old token is forgotten with it (their hashes bind them to it anyway).
    token.onRotate(() => logins.revokeAll());
  }

  grant(req: IncomingMessage): Grant | undefined {
    const peer = this.cluster.presence(req);
    if (peer.kind === "refused") return undefined;
    if (peer.kind === "peer") return peer;
    if (this.token.matches(presentedToken(req))) return { kind: "token" };
    const header = req.headers[PAGE_SECRET_HEADER];
    const pageSecret = typeof header === "string" ? header : undefined;
    for (const cookie of presentedLoginCookies(req, this.port)) {
      const loginId = this.logins.verify(this.token.value, cookie, pageSecret);
      if (loginId !== undefined) return { kind: "device", loginId };
    }
    return undefined;
  }

  /** Why a request that says it comes from a peer host is refused (no valid proof of the cluster secret), whatever else it presents (a ticket); undefined if it is not. */
  peerRefusal(req: IncomingMessage): string | undefined {
    const presence = this.cluster.presence(req);
    return presence.kind === "refused" ? presence.reason : undefined;
  }

  /**
   * Whether the request carried a login cookie that lets nothing in (revoked, or of an old token): the browser is told to
   * drop it. Only when the request relied on it (its page's half presented): a tab's own refused token (an old link)
   * says nothing of the cookie the browser sends with it. Not when it carried several of that name: one may be another
   * port's page's, set to shadow this one, and the browser would drop the device's own.
   */
  staleCookie(req: IncomingMessage): boolean {
    return typeof req.headers[PAGE_SECRET_HEADER] === "string" && presentedLoginCookies(req, this.port).length === 1;
  }
}
