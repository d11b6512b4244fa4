import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Many tests run dist/ (berth serve, the demo agent, the dashboard bundle): refuse to start on a stale build.
    globalSetup: ["test/support/require-fresh-build.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
