import { tmpdir } from "node:os";
import { resolve, join } from "node:path";
import { parseArgs } from "node:util";
import type { DemoAgentOptions } from "./app.js";

export const stateDirEnv = "BERTH_DEMO_STATE_DIR";

/** Shared across runs, so a restarted agent can still load its sessions. */
export const defaultStateDir = join(tmpdir(), "berth-demo-agent");

export const demoAgentUsage = "usage: berth-demo-agent [--state-dir DIR] [--no-load]";

/**
 * Reads `[--state-dir DIR] [--no-load]`; the state dir falls back to
 * `$BERTH_DEMO_STATE_DIR`, then {@link defaultStateDir}. Throws on anything else.
 */
export function parseDemoAgentOptions(argv: string[], env: NodeJS.ProcessEnv): DemoAgentOptions {
  const { values } = parseArgs({
    args: argv,
    options: { "state-dir": { type: "string" }, "no-load": { type: "boolean" } },
    strict: true,
    allowPositionals: false,
  });
  const stateDir = values["state-dir"] ?? env[stateDirEnv] ?? defaultStateDir;
  if (stateDir === "") {
    throw new Error(`--state-dir (or ${stateDirEnv}) must not be empty`);
  }
  return { stateDir: resolve(stateDir), loadSessions: !values["no-load"] };
}
