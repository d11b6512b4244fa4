import { ApiError } from "../api/api-error.js";
import type { TerminalOutputResult } from "../api/types.js";
import type { Transcript } from "./transcript.js";

/** How often a running command's output is read (as often as Berth sends it to a holder). */
const TERMINAL_MS = 500;

/** Repeats `run` every `ms`; the function returned stops it. Injected so a test can tick by hand. */
export type Every = (ms: number, run: () => void) => () => void;

const browserEvery: Every = (ms, run) => {
  const timer = setInterval(run, ms);
  return () => clearInterval(timer);
};

/**
 * - `off`: nothing to read, or the link does not allow it; `on`: a round every TERMINAL_MS;
 * - `stopped`: the page let go; nothing is read or shown any more.
 */
type Polling = { readonly name: "off" } | { readonly name: "on"; readonly stop: () => void } | { readonly name: "stopped" };

/**
 * A running command's output is read over REST as it grows, until it exits or its terminal is gone,
 * whether the page holds the session or only reads it: Berth sends a holder the output only of tool
 * calls it saw start while held. Reading holds nothing and starts no agent (L9).
 */
export class TerminalFollower {
  private polling: Polling = { name: "off" };
  /** One round of reads at a time: a slow answer does not stack rounds. */
  private round: "idle" | "reading" = "idle";
  /** Terminals whose command exited or whose output is gone: there is nothing more to read of them. */
  private readonly settled = new Set<string>();

  /**
   * `read`: a terminal's output (`api.terminal`); `linkAllows`: the page is linked to Berth (not out of
   * reach, failed or closed): reading starts again once it is.
   */
  constructor(
    private readonly transcript: Pick<Transcript, "terminalsToRead" | "showTerminal">,
    private readonly read: (terminalId: string) => Promise<TerminalOutputResult>,
    private readonly linkAllows: () => boolean,
    private readonly every: Every = browserEvery,
  ) {}

  /** Follows or stops following, after the transcript or the link changed. */
  update(): void {
    if (this.polling.name === "stopped") return;
    const follow = this.linkAllows() && this.transcript.terminalsToRead().some((terminalId) => !this.settled.has(terminalId));
    if (follow && this.polling.name === "off") {
      this.polling = { name: "on", stop: this.every(TERMINAL_MS, () => void this.readAll()) };
      void this.readAll();
    }
    if (!follow && this.polling.name === "on") {
      this.polling.stop();
      this.polling = { name: "off" };
    }
  }

  /** The page let go: nothing more is read, and what was on its way is not shown. */
  stop(): void {
    if (this.polling.name === "on") this.polling.stop();
    this.polling = { name: "stopped" };
  }

  /** Asked after an await: `stop()` may have come meanwhile (TypeScript keeps the narrowing from before it). */
  private stopped(): boolean {
    return this.polling.name === "stopped";
  }

  private async readAll(): Promise<void> {
    this.update();
    if (this.polling.name !== "on" || this.round === "reading") return;
    this.round = "reading";
    try {
      for (const terminalId of this.transcript.terminalsToRead()) {
        if (this.settled.has(terminalId)) continue;
        let output: TerminalOutputResult;
        try {
          output = await this.read(terminalId);
        } catch (error) {
          // Released or its location closed: nothing more to read (what the agent's final update carries is all there is).
          if (error instanceof ApiError && error.code === "terminal_not_found") {
            this.settled.add(terminalId);
            continue;
          }
          // Berth out of reach: the journal's reading finds out and reconnects; the next round tries again.
          return;
        }
        if (this.stopped()) return;
        if (output.exitStatus !== null) this.settled.add(terminalId);
        this.transcript.showTerminal(terminalId, output);
      }
    } finally {
      this.round = "idle";
    }
  }
}
