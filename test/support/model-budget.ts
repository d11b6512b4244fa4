import fc from "fast-check";
import { afterAll } from "vitest";
import { settlePromises } from "../../src/lifecycle/virtual-clock.js";

/**
 * How hard the model-based tests work. `npm test` runs them at CI size (≥ 10,000 interleavings
 * across the models); `npm run test:deep` sets BERTH_MODEL_DEEP=1 for ≥ 1,000,000 (nightly).
 * BERTH_MODEL_SCALE multiplies the CI size (Stryker runs them at 3 %, `npm run test:quick` at a quarter).
 */
const deep = process.env.BERTH_MODEL_DEEP === "1";
const scale = Number(process.env.BERTH_MODEL_SCALE ?? (deep ? 100 : 1));

/** The number of runs (interleavings) for a model whose CI size is `ci`. */
export function modelRuns(ci: number): number {
  return Math.max(1, Math.round(ci * scale));
}

/** What one model explored: printed once its property has run. */
export class ModelStats {
  runs = 0;
  commands = 0;
  scheduledSteps = 0;
  private readonly startedAt = performance.now();

  constructor(private readonly name: string) {
    afterAll(() => {
      this.report();
    });
  }

  /** A command with no model of its own: run it, let promise work settle, then check every invariant. */
  step<R extends { check(): void }>(name: string, run: (real: R) => unknown): fc.AsyncCommand<Record<string, never>, R> {
    return {
      check: () => true,
      run: async (_model, real) => {
        this.commands++;
        await run(real);
        await drainMicrotasks();
        real.check();
      },
      toString: () => name,
    };
  }

  /** fast-check's scheduler, with `check` (the model's invariants) after every scheduled step, not only after each command. */
  scheduler(check: () => void) {
    return fc.scheduler({
      act: async (f) => {
        await f();
        this.scheduledSteps++;
        await drainMicrotasks();
        check();
      },
    });
  }

  report(): string {
    const seconds = (performance.now() - this.startedAt) / 1000;
    const line =
      `[model] ${this.name}: ${this.runs.toLocaleString("en-US")} interleavings, ` +
      `${this.commands.toLocaleString("en-US")} commands (${(this.commands / Math.max(1, this.runs)).toFixed(1)} per run), ` +
      `${this.scheduledSteps.toLocaleString("en-US")} scheduled steps, invariants checked after each; ${seconds.toFixed(1)} s`;
    console.log(line);
    return line;
  }
}

/**
 * Lets every pending promise continuation run, however deep its chain: a macrotask boundary
 * comes only after the microtask queue is empty. The kernel has no I/O, so it is then quiescent.
 */
export function drainMicrotasks(): Promise<void> {
  return settlePromises(1);
}
