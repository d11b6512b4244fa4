import type { WriterStatus } from "../store/journal-writer.js";
import type { Logger } from "./logger.js";

/** What `/healthz` and the metrics say of the store. */
export interface StoreHealthView {
  /** `ok`: writes are committed as they come; `degraded`: SQLite cannot write for now, and writes wait, in order. */
  readonly state: "ok" | "degraded";
  /** Writes queued and not committed yet. */
  readonly pendingWrites: number;
  /** Degraded since (ISO 8601). */
  readonly since?: string;
  /** The SQLite code that blocks writing: `SQLITE_BUSY` (another connection holds the write lock), `SQLITE_FULL`, `SQLITE_READONLY`... */
  readonly code?: string;
  /** What it means, in words. */
  readonly reason?: string;
}

/** Work that had to be stored before it was acknowledged could not be, within the configured `writeTimeout`. */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}

/**
 * Whether the store can write, as the writer thread reports it: `writable` → `degraded` (since
 * when, why) → `writable`. One log line when it becomes degraded, one when it writes again.
 */
export class StoreHealth {
  private state:
    | { readonly name: "writable" }
    | { readonly name: "degraded"; readonly since: number; readonly code: string; readonly error: string } = {
    name: "writable",
  };

  constructor(private readonly log: Logger) {}

  report(status: WriterStatus): void {
    if (status.state === "blocked") {
      const first = this.state.name === "writable";
      this.state = { name: "degraded", since: status.since, code: status.code, error: status.error };
      if (first) {
        this.log.warn(
          { code: status.code, error: status.error, since: new Date(status.since).toISOString() },
          "store cannot write; writes are queued until it can",
        );
      }
      return;
    }
    if (this.state.name === "writable") return;
    const { code } = this.state;
    this.state = { name: "writable" };
    this.log.info({ code, degradedMs: status.at - status.since, since: new Date(status.since).toISOString() }, "store writes again");
  }

  view(pendingWrites: number): StoreHealthView {
    if (this.state.name === "writable") return { state: "ok", pendingWrites };
    const { code } = this.state;
    return { state: "degraded", pendingWrites, since: new Date(this.state.since).toISOString(), code, reason: this.reason() };
  }

  /** For error messages: what keeps the store from writing, or that it is catching up. */
  describe(pendingWrites: number): string {
    if (this.state.name === "writable") return `the store is catching up (${pendingWrites} writes queued)`;
    return `the store cannot write (${this.reason()}, since ${new Date(this.state.since).toISOString()}); ${pendingWrites} writes are queued`;
  }

  private reason(): string {
    if (this.state.name === "writable") return "";
    // No path: `/healthz` answers anyone on the machine.
    if (/^SQLITE_(BUSY|LOCKED)/.test(this.state.code))
      return `waiting for the database's write lock, held by another connection (${this.state.code})`;
    return `${this.state.code}: ${this.state.error}`;
  }
}
