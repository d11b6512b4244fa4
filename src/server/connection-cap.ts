import type { Logger } from "../host/logger.js";

/** How often, at most, refused connections are logged: a flood must not flood the log too. */
const LOG_EVERY_MS = 10_000;

/**
 * Logs the connections refused over `server.maxConnections`: the first at once, then at most one line every
 * {@link LOG_EVERY_MS} counting those refused since (none while nothing is refused).
 */
export class RefusedConnections {
  private unlogged = 0;
  private quiet: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly limit: number,
  ) {}

  refused(): void {
    this.unlogged++;
    if (this.quiet === undefined) this.report();
  }

  close(): void {
    clearTimeout(this.quiet);
    this.quiet = undefined;
  }

  private report(): void {
    this.quiet = undefined;
    if (this.unlogged === 0) return;
    this.log.warn(
      { refused: this.unlogged, limit: this.limit },
      "connections refused: too many open connections (server.maxConnections); they were closed at once",
    );
    this.unlogged = 0;
    this.quiet = setTimeout(() => this.report(), LOG_EVERY_MS).unref();
  }
}
