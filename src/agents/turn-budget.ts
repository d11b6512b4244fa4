/**
 * How many lines all agents' outputs may have handled in one turn of the event loop, together. Why: with many agents
 * streaming, one turn read a pipe's worth of lines from each (up to 64 KiB, about 130 chunks, a pipe) and handled them
 * all before anything else ran: `/healthz`, a prompt, another client's write waited for the whole turn, seconds on a
 * busy machine. Past the budget an output's lines wait (its pipe paused) for the next turn, when the budget is whole
 * again and the outputs that waited go first, in the order they began to wait.
 */
export class TurnBudget {
  private left: number;
  private waiting: Array<() => void> = [];
  private refillScheduled = false;

  constructor(private readonly linesPerTurn: number) {
    this.left = linesPerTurn;
  }

  /** One line to handle now: false once this turn's budget is spent (then {@link next} the rest). */
  take(): boolean {
    this.refillAfterThisTurn();
    if (this.left === 0) return false;
    this.left--;
    return true;
  }

  /** Runs `resume` next turn, with the budget whole again. */
  next(resume: () => void): void {
    this.waiting.push(resume);
    this.refillAfterThisTurn();
  }

  private refillAfterThisTurn(): void {
    if (this.refillScheduled) return;
    this.refillScheduled = true;
    setImmediate(() => {
      this.refillScheduled = false;
      this.left = this.linesPerTurn;
      const waiting = this.waiting;
      this.waiting = [];
      // One output's failure must not leave the others behind it paused for good: it goes on once they ran.
      let failure: { readonly error: unknown } | undefined;
      for (const resume of waiting) {
        try {
          resume();
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure) throw failure.error;
    });
  }
}
