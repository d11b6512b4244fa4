import { deferred } from "../lifecycle/deferred.js";

/** A prompt's place among its session's prompts in flight. */
export interface TurnPlace {
  /** Resolves once the prompt before it was answered and journaled; undefined for a prompt sent with none in flight. */
  readonly previous: Promise<void> | undefined;
  /** This prompt's turn is journaled to its end: the next one may start. */
  leave(): void;
}

/**
 * Keeps a session's turns one after another in its journal while its agent has several prompts in flight (a client
 * may prompt during a turn; agents queue such prompts, or cancel the first): a prompt's turn starts when the one sent
 * before it ended, as the agent answers them in that order, and the updates between belong to the turn that is open.
 */
export class TurnOrder {
  private readonly lastPlace = new Map<string, Promise<void>>();

  /** Takes the session's next place; call it as the prompt is sent to the agent. */
  enter(sessionId: string): TurnPlace {
    const previous = this.lastPlace.get(sessionId);
    const left = deferred<void>();
    this.lastPlace.set(sessionId, left.promise);
    return {
      previous,
      leave: () => {
        if (this.lastPlace.get(sessionId) === left.promise) this.lastPlace.delete(sessionId);
        left.resolve();
      },
    };
  }
}
