import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * `npm run test:quick`, the inner loop (at most 2 minutes on a 2-core machine): the lifecycle kernel, the unit tests —
 * no browser, no PostgreSQL, no real agent, no `berth serve` — and one end-to-end flow through a real `berth serve`.
 * A folder is listed whole when all of its tests are unit tests; elsewhere, file by file. `npm test` runs everything.
 */
export default defineConfig({
  test: {
    ...base.test,
    // vitest's default on 2 cores is one worker; the tests mostly wait on processes and files.
    maxWorkers: 2,
    // The kernel's model-based tests at a quarter of their CI size (2,750 interleavings); `npm test` runs them whole.
    env: { BERTH_MODEL_SCALE: "0.25" },
    include: [
      "test/lifecycle/**/*.test.ts",
      "test/processes/**/*.test.ts",
      "test/store/**/*.test.ts",
      "test/store-contract/sqlite.test.ts",
      "test/protocol/**/*.test.ts",
      "test/changes/**/*.test.ts",
      "test/git/**/*.test.ts",
      "test/location/**/*.test.ts",
      "test/support/**/*.test.ts",
      "test/architecture.test.ts",
      "test/architecture-doc.test.ts",
      "test/log-lines-doc.test.ts",
      "test/agents/demo-agent-units.test.ts",
      "test/agents/session-update-fast-path.test.ts",
      "test/cli/invocation.test.ts",
      "test/sandbox/{bwrap-args,policy,git-dirs}.test.ts",
      "test/host/{host-views,session-titles,owned-elsewhere,login-callback,fleet-directory,peer-live-views,agent-state-updates}.test.ts",
      "test/server/{peer-route,question-answers,socket-keepalive,terminal-mirror,json-nesting,host-errors-kernel,serve-settings,sse-frames,openapi,listener,message-limited-socket,http-client-presence}.test.ts",
      "test/web/{drafts,format,record-text,error-words,sandbox-refusal,review-parts,form-fields,reconnection,transcript}.test.ts",
      "test/worktrees/worktree-naming.test.ts",
      // The end-to-end flow.
      "test/server/serve-prompt.test.ts",
    ],
  },
});
