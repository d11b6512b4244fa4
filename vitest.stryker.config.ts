import { defineConfig } from "vitest/config";

/** The tests Stryker runs against each mutant of src/lifecycle (stryker.config.mjs) and src/processes (stryker.processes.config.mjs). */
export default defineConfig({
  test: {
    include: ["test/lifecycle/**/*.test.ts", "test/processes/**/*.test.ts"],
    // Runs the compiled script (dist/), which Stryker does not mutate.
    exclude: ["test/lifecycle/hold-race-repro.test.ts"],
    // Each mutant runs the model-based tests at 3 % of their CI size (330 interleavings), not at CI size: with
    // hundreds of mutants, the whole models would take hours.
    env: { BERTH_MODEL_SCALE: "0.03" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
