import type { Host } from "../host/host.js";
import type { ClusterSecret } from "./cluster-secret.js";
import type { PeerHost } from "./peer-route.js";

/** A fleet-wide read waits this long for each peer: a slow one is reported as unreachable, not waited for. */
const PEER_READ_TIMEOUT_MS = 3_000;

/** What every online peer answered to a fleet-wide read, and which could not be read (with why). */
export interface PeerReads<T> {
  readonly answers: readonly { readonly host: string; readonly body: T }[];
  readonly unreachable: readonly { readonly host: string; readonly error: string }[];
}

/**
 * GET `path` at every online peer, in parallel, each within {@link PEER_READ_TIMEOUT_MS}, with a proof of the cluster
 * secret: the fleet-wide reads of the one view and of placement (docs/fleet.md). The caller decides whether it may
 * fan out (one hop: never for a request a peer sent).
 */
export async function readPeers<T>(host: Host, cluster: ClusterSecret, path: string, valid: (body: unknown) => body is T): Promise<PeerReads<T>> {
  const peers = (host.hosts() ?? []).filter((peer) => !peer.self && peer.online && peer.url !== null);
  type Read = { readonly host: string; readonly body: T } | { readonly host: string; readonly error: string };
  const read = async (peer: PeerHost): Promise<Read> => {
    try {
      const target = new URL(path, peer.url);
      const response = await fetch(target, {
        headers: cluster.headers(peer, "read", "GET", `${target.pathname}${target.search}`),
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

/** The network error under a `fetch` failure (`fetch failed` alone says nothing). */
export function causeOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}
