import { randomBytes } from "node:crypto";

/** A ticket as `POST /api/tickets` hands it out. */
export interface IssuedTicket {
  readonly ticket: string;
  /** Milliseconds since the epoch, by the tickets' clock. */
  readonly expiresAt: number;
}

export interface TicketOptions {
  /** How long a ticket may wait for its connection (default 30 s). */
  readonly ttlMs?: number;
  /** The clock (default `Date.now`); tests inject their own. */
  readonly now?: () => number;
  /** Outstanding tickets kept at most; the oldest go first (default 1,000). */
  readonly max?: number;
}

const DEFAULT_TTL_MS = 30_000;
const DEFAULT_MAX = 1_000;

/**
 * Short-lived, single-use credentials for the connections a browser cannot open with an
 * `Authorization` header (EventSource, WebSocket): a page asks for one with its token in a
 * header and puts only the ticket in the URL, where proxies' logs and the history keep URLs. A
 * ticket opens one connection within its lifetime and is then gone, whether it was used or not.
 */
export class Tickets {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly max: number;
  /** Ticket → expiry, in the order issued (a Map iterates in insertion order). */
  private readonly open = new Map<string, number>();

  constructor(options: TicketOptions = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.now = options.now ?? Date.now;
    this.max = options.max ?? DEFAULT_MAX;
  }

  issue(): IssuedTicket {
    this.forgetExpired();
    while (this.open.size >= this.max) this.open.delete(this.open.keys().next().value!);
    const ticket = randomBytes(32).toString("base64url");
    const expiresAt = this.now() + this.ttlMs;
    this.open.set(ticket, expiresAt);
    return { ticket, expiresAt };
  }

  /** Every open ticket stops working (the token rotated: what it let in goes with it). */
  revokeAll(): void {
    this.open.clear();
  }

  /** True once for a ticket issued here and not yet expired; it cannot be presented again. */
  redeem(ticket: string | null): boolean {
    if (ticket === null) return false;
    const expiresAt = this.open.get(ticket);
    if (expiresAt === undefined) return false;
    this.open.delete(ticket);
    return this.now() < expiresAt;
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [ticket, expiresAt] of this.open) if (expiresAt <= now) this.open.delete(ticket);
  }
}
