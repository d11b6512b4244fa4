import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Many tests run dist/ (berth serve, the demo agent, the dashboard bundle): refuse to start on a stale build.
    globalSetup: ["test/support/require-fresh-build.ts"],
    // vitest's default (one file less than the cores) runs one file at a time on two cores; most tests wait on
    // processes and sockets as much as they compute, so two at once there finish in about two thirds of the time.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
