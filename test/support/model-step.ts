import type fc from "fast-check";

/** What a model-based test drives: a virtual clock to let work settle, and its invariants. */
export interface CheckedReal {
  readonly clock: { advance(ms: number): Promise<void> };
  check(): void;
}

/** A command with no model of its own: run it, let promise work settle, then check every invariant. */
export function modelStep<R extends CheckedReal>(name: string, run: (real: R) => unknown): fc.AsyncCommand<Record<string, never>, R> {
  return {
    check: () => true,
    async run(_model, real) {
      await run(real);
      await real.clock.advance(0);
      real.check();
    },
    toString: () => name,
  };
}
