import { attemptStarted, connected, lostConnection, type Reconnection } from "../live/reconnection.js";

/** Where the page goes back to once Berth is reached again: only reading the session, or holding it. */
export type ResumeTo = "reading" | "live";

/** Time for the reconnector: injected so its backoff can be followed without waiting. */
export interface ReconnectClock {
  now(): number;
  /** Runs `run` after `ms`; the function returned cancels it. */
  after(ms: number, run: () => void): () => void;
  /** Spreads the delays (see `reconnectDelay`). */
  random(): number;
}

const browserClock: ReconnectClock = {
  now: () => Date.now(),
  after: (ms, run) => {
    const timer = setTimeout(run, ms);
    return () => clearTimeout(timer);
  },
  random: Math.random,
};

/** Tells when the network comes back (the page's window; absent where there is none). */
export interface NetworkSignal {
  addEventListener?(type: "online", listener: () => void): void;
  removeEventListener?(type: "online", listener: () => void): void;
}

/**
 * - `idle`: nothing to retry (Berth was reached, or an attempt is under way);
 * - `waiting`: the next attempt is scheduled, and goes back to `resumeTo`;
 * - `stopped`: the page let go; nothing is retried any more.
 */
type Phase =
  | { readonly name: "idle" }
  | { readonly name: "waiting"; readonly resumeTo: ResumeTo; readonly cancel: () => void }
  | { readonly name: "stopped" };

/**
 * Schedules the chat's attempts to reach Berth again after a loss: each failed attempt waits longer
 * (live/reconnection.ts), the browser coming back online or the person asking tries at once.
 */
export class Reconnector {
  private current: Reconnection = connected;
  private phase: Phase = { name: "idle" };
  private readonly online = (): void => this.retryNow();

  /** `attempt` is called when an attempt is due, with where to go back to and the reconnection as it now stands. */
  constructor(
    private readonly attempt: (resumeTo: ResumeTo, reconnection: Reconnection) => void,
    private readonly clock: ReconnectClock = browserClock,
    private readonly network: NetworkSignal = globalThis as NetworkSignal,
  ) {
    network.addEventListener?.("online", this.online);
  }

  get reconnection(): Reconnection {
    return this.current;
  }

  /**
   * Berth could not be reached (or an attempt failed): schedules the next attempt, and returns the
   * waiting state; null when this loss was already told (a socket's close and its request's failure) or the reconnector stopped.
   */
  lost(resumeTo: ResumeTo, reason: string): Extract<Reconnection, { name: "waiting" }> | null {
    if (this.phase.name === "stopped") return null;
    const now = this.clock.now();
    const waiting = lostConnection(this.current, reason, now, this.clock.random);
    if (waiting === this.current) return null;
    this.current = waiting;
    if (this.phase.name === "waiting") this.phase.cancel();
    this.phase = { name: "waiting", resumeTo, cancel: this.clock.after(Math.max(0, waiting.retryAt - now), () => this.start()) };
    return waiting;
  }

  /** An attempt really worked: the next loss starts from the first delay. Returns whether that changed anything. */
  reached(): boolean {
    if (this.current === connected || this.phase.name === "stopped") return false;
    this.current = connected;
    return true;
  }

  /** The network is back (or the person asked): the scheduled attempt starts now. */
  retryNow(): void {
    if (this.phase.name !== "waiting") return;
    this.phase.cancel();
    this.start();
  }

  /** The page let go: no attempt is made any more. */
  stop(): void {
    if (this.phase.name === "waiting") this.phase.cancel();
    this.phase = { name: "stopped" };
    this.network.removeEventListener?.("online", this.online);
  }

  private start(): void {
    if (this.phase.name !== "waiting") return;
    const { resumeTo } = this.phase;
    this.phase = { name: "idle" };
    this.current = attemptStarted(this.current);
    this.attempt(resumeTo, this.current);
  }
}
