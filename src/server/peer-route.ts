import type { SessionOwner } from "../host/views.js";

/** A peer host a request is relayed to: its id and the URL it registered (`fleet.url`). */
export interface PeerHost {
  readonly id: string;
  readonly url: string;
}

/** Where a request for a session is answered: here, or relayed to the session's owner. */
export type PeerRoute = { readonly kind: "here" } | { readonly kind: "relay"; readonly owner: PeerHost };

const HERE: PeerRoute = { kind: "here" };

/**
 * Routing's one decision (docs/fleet.md, "Routing"). A request for a session another host owns is
 * relayed to that owner when the owner is online and registered a URL, this host has the cluster
 * secret, and the request was not relayed to this host already (one hop: two hosts that disagree on
 * an owner never bounce a request between them). Anything else is answered here: this host's own
 * session, or another host's, which the host refuses (409 `owned_by_other_host`) or, where a host may
 * take an offline owner's sessions, takes.
 */
export function routeOf(owner: SessionOwner | undefined, { canRelay }: { readonly canRelay: boolean }): PeerRoute {
  if (!owner || !canRelay || !owner.online || owner.url === null) return HERE;
  return { kind: "relay", owner: { id: owner.id, url: owner.url } };
}
