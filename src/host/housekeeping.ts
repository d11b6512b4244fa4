import type { Clock, Timer } from "../lifecycle/clock.js";
import { deleteExpiredOutput } from "../location/terminal-output-files.js";
import type { Logger } from "./logger.js";

const HOUSEKEEPING_INTERVAL_MS = 60 * 60_000;

export interface HousekeepingOptions {
  readonly clock: Clock;
  readonly log: Logger;
  readonly terminalOutputDir: string;
  /** How long full terminal output files are kept. */
  readonly outputRetentionMs: number;
  /** Removes lifecycle records older than a time (through the host's writer); settles with how many. */
  readonly pruneRecordsBefore: (at: number) => Promise<number>;
  readonly recordRetentionMs: number;
}

/** Hourly, from the start: terminal output files and lifecycle records older than their retention are removed. */
export class Housekeeping {
  private timer: Timer | undefined;

  constructor(private readonly options: HousekeepingOptions) {}

  start(): void {
    const { clock, log } = this.options;
    const run = () => {
      const now = clock.now();
      void deleteExpiredOutput(this.options.terminalOutputDir, this.options.outputRetentionMs, now).catch((error: unknown) =>
        log.warn({ err: error }, "terminal output cleanup failed"),
      );
      this.options.pruneRecordsBefore(now - this.options.recordRetentionMs).then(
        (pruned) => {
          if (pruned > 0) log.info({ pruned }, "old lifecycle records pruned");
        },
        (error: unknown) => log.warn({ err: error }, "lifecycle record pruning failed"),
      );
      this.timer = clock.setTimeout(run, HOUSEKEEPING_INTERVAL_MS);
    };
    run();
  }

  stop(): void {
    this.timer?.cancel();
  }
}
