// Mutation testing of the lifecycle kernel and the process-group layer: `npm run mutate`.
// Only the kernel's own tests run against each mutant (vitest.stryker.config.ts), so the score
// says what those tests would miss; the model-based tests run at their CI size.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.stryker.config.ts" },
  mutate: ["src/lifecycle/**/*.ts", "src/processes/**/*.ts"],
  coverageAnalysis: "perTest",
  concurrency: 2,
  timeoutMS: 5_000,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  thresholds: { high: 90, low: 80, break: null },
  // TypeScript 7 has no JS API for Stryker's tsconfig rewriting, and vitest never reads the
  // tsconfig's paths: point it at a file that does not exist so it leaves the sandbox's alone.
  tsconfigFile: "tsconfig.stryker-none.json",
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};
