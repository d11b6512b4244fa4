import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { SlowFirstSequencer } from "./test/support/slow-first-sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Many tests run dist/ (berth serve, the demo agent, the dashboard bundle): refuse to start on a stale build.
    globalSetup: ["test/support/require-fresh-build.ts"],
    // vitest's default (one file less than the cores) runs one file at a time on two cores. The files wait on
    // processes, sockets and real timers for about two fifths of their time, so one file more than the cores keeps
    // them busy: on two cores, three at once take three quarters of the time two do (docs/benchmarks.md).
    maxWorkers: availableParallelism() + 1,
    // Files that drive real agents first, so none is left running alone at the end (test/support/slow-first-sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
