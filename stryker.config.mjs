// Mutation testing of the lifecycle kernel: `npm run mutate:lifecycle` (`npm run mutate` runs it, then
// stryker.processes.config.mjs). Only the tests of test/lifecycle and test/processes run against each mutant
// (vitest.stryker.config.ts; of those, the ones that cover it), so the score says what those tests would miss; the
// model-based tests run at 3 % of their CI size there. The run fails below 90 % (docs/lifecycle.md, "Mutation testing").
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.stryker.config.ts" },
  mutate: ["src/lifecycle/**/*.ts"],
  coverageAnalysis: "perTest",
  concurrency: 2,
  timeoutMS: 5_000,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/lifecycle.html" },
  jsonReporter: { fileName: "reports/mutation/lifecycle.json" },
  thresholds: { high: 95, low: 90, break: 90 },
  // TypeScript 7 has no JS API for Stryker's tsconfig rewriting, and vitest never reads the
  // tsconfig's paths: point it at a file that does not exist so it leaves the sandbox's alone.
  tsconfigFile: "tsconfig.stryker-none.json",
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};
