import type { Clock } from "./clock.js";
import { deferred, type Deferred } from "./deferred.js";
import type { RecordSink } from "./lifecycle-records.js";
import { Listeners } from "./listeners.js";
import type { LocationKey } from "./location-key.js";

/** Why a turn was interrupted. Recorded and reported with its settlement. */
export type InterruptReason = "user" | "inactivity" | "shutdown";

export type TurnOutcome = "completed" | "failed" | "interrupted";

export interface Settlement {
  readonly sessionId: string;
  readonly location: LocationKey;
  readonly outcome: TurnOutcome;
  /** Set when the turn was interrupted before it settled. */
  readonly reason: InterruptReason | undefined;
  readonly startedAt: number;
  readonly settledAt: number;
}

/** A turn in flight: `running`, then `interrupting` once asked to stop, then settled and gone. */
type ExecutionState = { readonly name: "running" } | { readonly name: "interrupting"; readonly reason: InterruptReason };

export interface ActiveExecution {
  readonly sessionId: string;
  readonly location: LocationKey;
  readonly startedAt: number;
  readonly state: ExecutionState;
}

/** Given to whoever runs one prompt of the turn; only the handles of its prompts can settle it. */
export interface TurnHandle {
  readonly sessionId: string;
  /**
   * Records that this prompt was answered. The turn settles with its last prompt, as `outcome` (an interrupted turn
   * as `interrupted` whatever is passed); the settlement is returned then, else undefined.
   */
  settle(outcome?: Exclude<TurnOutcome, "interrupted">): Settlement | undefined;
}

interface Execution extends ActiveExecution {
  state: ExecutionState;
  readonly onInterrupt: (reason: InterruptReason) => void;
  readonly settlement: Deferred<Settlement>;
  /** Prompts sent and not yet answered: the turn stays active until the last one is. */
  unanswered: number;
}

export class TurnAlreadyRunningError extends Error {
  override readonly name = "TurnAlreadyRunningError";
  constructor(
    readonly sessionId: string,
    why = "already has a turn in flight",
  ) {
    super(`session ${sessionId} ${why}`);
  }
}

/** Which sessions are running a turn, and where. The only authority on "active execution". */
export class Executions {
  private readonly bySession = new Map<string, Execution>();
  private readonly byLocation = new Map<string, Set<Execution>>();
  private readonly settledListeners = new Listeners<Settlement>();
  private readonly beganListeners = new Listeners<ActiveExecution>();

  constructor(
    private readonly clock: Clock,
    private readonly record: RecordSink = () => undefined,
  ) {}

  /**
   * Admits a prompt. The first one begins the session's turn, and its `onInterrupt` is how the runner is asked to stop
   * (e.g. ACP `session/cancel`); one sent while that turn runs joins it (agents queue such prompts, or cancel the
   * first): the turn stays active until the last prompt's handle settles it, and one interruption stops them all.
   * A prompt while the turn is being interrupted is refused: the agent has not answered the cancel yet. An `exclusive`
   * prompt never joins: it is refused while any turn runs (one that must start a turn of its own, e.g. review comments).
   */
  begin(
    sessionId: string,
    location: LocationKey,
    onInterrupt: (reason: InterruptReason) => void,
    options: { readonly exclusive?: boolean } = {},
  ): TurnHandle {
    const running = this.bySession.get(sessionId);
    if (running?.state.name === "interrupting")
      throw new TurnAlreadyRunningError(sessionId, "is cancelling its turn in flight: send the prompt once the cancelled turn has ended");
    if (running && options.exclusive) throw new TurnAlreadyRunningError(sessionId);
    if (running) return this.join(running);
    const execution: Execution = {
      sessionId,
      location,
      startedAt: this.clock.now(),
      state: { name: "running" },
      onInterrupt,
      settlement: deferred<Settlement>(),
      unanswered: 0,
    };
    this.bySession.set(sessionId, execution);
    let atLocation = this.byLocation.get(location.id);
    if (!atLocation) this.byLocation.set(location.id, (atLocation = new Set()));
    atLocation.add(execution);
    this.beganListeners.emit(execution);
    return this.join(execution);
  }

  /** One more prompt of the turn; its handle settles it once, however often it is called. */
  private join(execution: Execution): TurnHandle {
    execution.unanswered++;
    let answered = false;
    return {
      sessionId: execution.sessionId,
      settle: (outcome = "completed") => {
        if (answered) return undefined;
        answered = true;
        return --execution.unanswered === 0 ? this.settle(execution, outcome) : undefined;
      },
    };
  }

  isActive(sessionId: string): boolean {
    return this.bySession.has(sessionId);
  }

  get(sessionId: string): ActiveExecution | undefined {
    return this.bySession.get(sessionId);
  }

  active(): ActiveExecution[] {
    return [...this.bySession.values()];
  }

  /** Ids of the locations that have at least one active session. */
  activeLocationIds(): IterableIterator<string> {
    return this.byLocation.keys();
  }

  activeAt(locationId: string): ActiveExecution[] {
    return [...(this.byLocation.get(locationId) ?? [])];
  }

  hasActiveAt(locationId: string): boolean {
    return this.byLocation.has(locationId);
  }

  /**
   * Asks a running turn to stop. Returns false if the session has no turn in flight.
   * With `awaitSettlement`, resolves only once the turn has settled.
   */
  async interrupt(sessionId: string, options: { reason: InterruptReason; awaitSettlement?: boolean }): Promise<boolean> {
    const execution = this.bySession.get(sessionId);
    if (!execution) return false;
    if (execution.state.name === "running") {
      execution.state = { name: "interrupting", reason: options.reason };
      this.record({
        kind: "session_interrupted",
        sessionId,
        directory: execution.location.directory,
        workspace: execution.location.workspace,
        reason: options.reason,
      });
      try {
        execution.onInterrupt(options.reason);
      } catch {
        // The runner failed to ask its turn to stop; the turn is still interrupting and settles as such.
      }
    }
    if (options.awaitSettlement) await execution.settlement.promise;
    return true;
  }

  /** Resolves with the settlement of the session's current turn, or undefined if none runs. */
  settled(sessionId: string): Promise<Settlement> | undefined {
    return this.bySession.get(sessionId)?.settlement.promise;
  }

  onSettled(listener: (settlement: Settlement) => void): () => void {
    return this.settledListeners.add(listener);
  }

  onBegan(listener: (execution: ActiveExecution) => void): () => void {
    return this.beganListeners.add(listener);
  }

  private settle(execution: Execution, outcome: Exclude<TurnOutcome, "interrupted">): Settlement | undefined {
    // A stale handle (its turn already settled) must not end a newer turn of the same session.
    if (this.bySession.get(execution.sessionId) !== execution) return undefined;
    this.bySession.delete(execution.sessionId);
    const atLocation = this.byLocation.get(execution.location.id);
    atLocation?.delete(execution);
    if (atLocation?.size === 0) this.byLocation.delete(execution.location.id);
    const interrupted = execution.state.name === "interrupting";
    const settlement: Settlement = {
      sessionId: execution.sessionId,
      location: execution.location,
      outcome: interrupted ? "interrupted" : outcome,
      reason: execution.state.name === "interrupting" ? execution.state.reason : undefined,
      startedAt: execution.startedAt,
      settledAt: this.clock.now(),
    };
    execution.settlement.resolve(settlement);
    this.settledListeners.emit(settlement);
    return settlement;
  }
}
