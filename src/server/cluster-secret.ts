import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The header a host proves it has the cluster secret in, for this one request (the secret itself never travels). */
const PROOF_HEADER = "berth-cluster-proof";
/** The header naming the host that relays: a relayed request is answered where it lands, never relayed again. */
export const RELAYED_BY_HEADER = "berth-relayed-by";
/** The header older hosts sent the secret itself in: it still marks a request as a peer's, which is refused. */
const SECRET_HEADER = "berth-cluster-secret";
/** How far a proof's time may be from this host's clock (either way); its nonce is remembered twice as long. */
const PROOF_WINDOW_MS = 60_000;
const NONCE = /^[A-Za-z0-9_-]{22}$/;

/**
 * What a proof is for, so that one overheard for one use opens nothing else: relaying a client's ACP or a session's REST
 * request (`relay`), a fleet-wide read (`read`: locations, a directory), following the owner's own sessions (`live-feed`).
 */
export type PeerPurpose = "relay" | "read" | "live-feed";
const PURPOSES: readonly PeerPurpose[] = ["relay", "read", "live-feed"];

/** The host a proof is meant for: its id and the URL it registered (`fleet.url`), the one this host dials. */
export interface ProofTarget {
  readonly id: string;
  readonly url: string;
}
const MAC_BYTES = 32;

/** What a request says of the cluster: nothing (a client), a peer with a valid proof, or a peer refused (and why, for the log). */
export type PeerPresence =
  | { readonly kind: "none" }
  | { readonly kind: "peer"; readonly hostId: string; readonly purpose: PeerPurpose }
  | { readonly kind: "refused"; readonly reason: string };

/**
 * The secret the hosts of a fleet share (config `fleet.secret`, env `BERTH_CLUSTER_SECRET`). A host relaying a
 * client's ACP or REST request to the session's owner presents a proof that it has it, never the secret itself
 * (docs/security.md): an HMAC-SHA256, keyed by the secret, of the relaying host, the target host and the URL it
 * registered (the one dialled), the proof's purpose, a time, a nonce, the method and the path. The owner lets the
 * request in only if the proof names its own id and its own `fleet.url`, is within {@link PROOF_WINDOW_MS} of its clock
 * and was never seen before; the route then checks the purpose. Whoever receives a proof because the shared store
 * sent a host there (a `hosts.url` pointing elsewhere) cannot replay it to the host it was meant for, and whoever
 * overhears one learns nothing it can use for another request. Never logged.
 */
export class ClusterSecret {
  private readonly key: Buffer | undefined;
  private readonly seen = new Map<string, number>();
  /** Each request is judged once, however many times its access is asked about (its nonce is spent the first time). */
  private readonly judged = new WeakMap<IncomingMessage, PeerPresence>();

  /** `selfId` and `selfUrl`: this host's id in the fleet and the URL it registered, which every proof it accepts must name. */
  constructor(
    secret: string | undefined,
    private readonly selfId: string | null = null,
    private readonly selfUrl: string | null = null,
    private readonly now: () => number = Date.now,
  ) {
    this.key = secret === undefined ? undefined : Buffer.from(secret);
  }

  /** Whether this host relays to its peers and lets relayed requests in. */
  get configured(): boolean {
    return this.key !== undefined;
  }

  /**
   * A request presenting a proof (or the secret) or naming a relaying host is a peer's: let in only with a host id
   * and a valid, fresh proof for it; anything else is refused (401), whatever token it also carries.
   */
  presence(req: IncomingMessage): PeerPresence {
    let presence = this.judged.get(req);
    if (!presence) {
      presence = this.judge(req);
      this.judged.set(req, presence);
    }
    return presence;
  }

  /** The headers of a `method` request to `path` (with its query) on host `target`, dialled at its registered URL, for `purpose`. */
  headers(target: ProofTarget, purpose: PeerPurpose, method: string, path: string): Record<string, string> {
    if (!this.key || this.selfId === null) throw new Error("no cluster secret is set: nothing is relayed");
    const time = String(this.now());
    const nonce = randomBytes(16).toString("base64url");
    const mac = this.mac([this.selfId, target.id, target.url, purpose, time, nonce, method.toUpperCase(), path]).toString("base64url");
    return { [PROOF_HEADER]: `${purpose}.${time}.${nonce}.${mac}`, [RELAYED_BY_HEADER]: this.selfId };
  }

  private judge(req: IncomingMessage): PeerPresence {
    const proof = headerOf(req, PROOF_HEADER);
    const hostId = headerOf(req, RELAYED_BY_HEADER);
    if (proof === undefined && hostId === undefined && headerOf(req, SECRET_HEADER) === undefined) return { kind: "none" };
    const refused = (reason: string): PeerPresence => ({ kind: "refused", reason });
    if (!this.key || this.selfId === null) return refused("this host has no cluster secret");
    if (hostId === undefined || hostId === "") return refused(`no ${RELAYED_BY_HEADER} header`);
    if (proof === undefined) return refused(`no ${PROOF_HEADER} header (a host of an older version sends the secret itself)`);
    if (this.selfUrl === null) return refused("this host registered no fleet.url, which every proof must name");
    const [purpose = "", time = "", nonce = "", mac = "", ...rest] = proof.split(".");
    const at = Number(time);
    if (rest.length > 0 || !isPurpose(purpose) || !/^\d{1,16}$/.test(time) || !NONCE.test(nonce)) {
      return refused("a malformed proof (a host of an older version sends one without its purpose)");
    }
    const given = Buffer.from(mac, "base64url");
    const fields = [hostId, this.selfId, this.selfUrl, purpose, time, nonce, (req.method ?? "").toUpperCase(), req.url ?? ""];
    // The proof's length is public (always 32 bytes); only a proof of that length is compared, in constant time.
    if (given.length !== MAC_BYTES || !timingSafeEqual(given, this.mac(fields))) {
      return refused(`a wrong proof (another secret, host, URL than this host's ${this.selfUrl}, method or path)`);
    }
    const now = this.now();
    if (Math.abs(now - at) > PROOF_WINDOW_MS) return refused(`a proof ${Math.round((now - at) / 1000)} s from this host's clock`);
    this.forgetOld(now);
    if (this.seen.has(nonce)) return refused("a proof already used");
    this.seen.set(nonce, now + 2 * PROOF_WINDOW_MS);
    return { kind: "peer", hostId, purpose };
  }

  private mac(fields: readonly string[]): Buffer {
    return createHmac("sha256", this.key!).update(JSON.stringify(fields)).digest();
  }

  /** Nonces are remembered in the order they came, each until its proof could no longer be fresh. */
  private forgetOld(now: number): void {
    for (const [nonce, until] of this.seen) {
      if (until > now) return;
      this.seen.delete(nonce);
    }
  }
}

function isPurpose(value: string): value is PeerPurpose {
  return (PURPOSES as readonly string[]).includes(value);
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}
