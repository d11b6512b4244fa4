/** What `/healthz` says of this host's heartbeats in its fleet (PostgreSQL only). */
export interface HeartbeatHealthView {
  /** `ok`: heartbeats get through; `degraded`: the last one failed, or waits on the shared store. */
  readonly state: "ok" | "degraded";
  /** Degraded since: the first heartbeat that failed or hung (ISO 8601). */
  readonly since?: string;
  /** Why, in words (the latest failure). */
  readonly reason?: string;
}

/**
 * Whether this host's heartbeats reach the shared store: `beating` → `failing` (since when, why) → `beating` at the next
 * one that gets through. Past the deadline (docs/fleet.md) the host gives its sessions up; until then it says so here.
 */
export class HeartbeatHealth {
  private state: { readonly name: "beating" } | { readonly name: "failing"; readonly since: number; readonly reason: string } = {
    name: "beating",
  };

  /** `now`: the wall clock, for `since` only (never for the deadline). */
  constructor(private readonly now: () => number = Date.now) {}

  succeeded(): void {
    this.state = { name: "beating" };
  }

  failed(reason: string): void {
    const since = this.state.name === "failing" ? this.state.since : this.now();
    this.state = { name: "failing", since, reason };
  }

  view(): HeartbeatHealthView {
    if (this.state.name === "beating") return { state: "ok" };
    return { state: "degraded", since: new Date(this.state.since).toISOString(), reason: this.state.reason };
  }
}
