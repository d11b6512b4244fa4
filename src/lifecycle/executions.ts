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

/** Given to whoever runs the turn; only this handle can settle it. */
export interface TurnHandle {
  readonly sessionId: string;
  /** Records how the turn ended; an interrupted turn settles as `interrupted` whatever is passed. */
  settle(outcome?: Exclude<TurnOutcome, "interrupted">): Settlement | undefined;
}

interface Execution extends ActiveExecution {
  state: ExecutionState;
  readonly onInterrupt: (reason: InterruptReason) => void;
  readonly settlement: Deferred<Settlement>;
}

export class TurnAlreadyRunningError extends Error {
  override readonly name = "TurnAlreadyRunningError";
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} already has a turn in flight`);
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
   * Admits a turn. `onInterrupt` is how the runner is asked to stop (e.g. ACP `session/cancel`);
   * the turn is still active until its handle settles it.
   */
  begin(sessionId: string, location: LocationKey, onInterrupt: (reason: InterruptReason) => void): TurnHandle {
    if (this.bySession.has(sessionId)) throw new TurnAlreadyRunningError(sessionId);
    const execution: Execution = {
      sessionId,
      location,
      startedAt: this.clock.now(),
      state: { name: "running" },
      onInterrupt,
      settlement: deferred<Settlement>(),
    };
    this.bySession.set(sessionId, execution);
    let atLocation = this.byLocation.get(location.id);
    if (!atLocation) this.byLocation.set(location.id, (atLocation = new Set()));
    atLocation.add(execution);
    this.beganListeners.emit(execution);
    return { sessionId, settle: (outcome = "completed") => this.settle(execution, outcome) };
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
