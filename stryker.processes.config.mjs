// Mutation testing of the process-group layer: `npm run mutate:processes` (scripts/mutate-processes), which runs it in
// a PID namespace of its own (`unshare`, as root): a mutant of the code that picks which processes a stop signals
// could otherwise signal every process of the machine (docs/lifecycle.md, "Mutation testing"). The same tests as the
// kernel's run (as root, the cgroup tests among them); the run fails below 80 %.
import lifecycle from "./stryker.config.mjs";

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...lifecycle,
  mutate: ["src/processes/**/*.ts"],
  htmlReporter: { fileName: "reports/mutation/processes.html" },
  jsonReporter: { fileName: "reports/mutation/processes.json" },
  thresholds: { high: 90, low: 80, break: 80 },
};
