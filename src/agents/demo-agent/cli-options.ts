import { tmpdir } from "node:os";
import { resolve, join } from "node:path";
import { parseArgs } from "node:util";
import type { DemoAgentOptions } from "./app.js";
import { listSessionsModes, type ListSessions } from "./listed-sessions.js";
import { busyPrompts, type BusyPrompt } from "./turn.js";

const stateDirEnv = "BERTH_DEMO_STATE_DIR";
const requireAuthEnv = "BERTH_DEMO_REQUIRE_AUTH";
const recordEnv = "BERTH_DEMO_RECORD";
const busyPromptEnv = "BERTH_DEMO_BUSY_PROMPT";
const listSessionsEnv = "BERTH_DEMO_LIST_SESSIONS";
const batchWritesEnv = "BERTH_DEMO_BATCH_WRITES";

/** Shared across runs, so a restarted agent can still load its sessions. */
export const defaultStateDir = join(tmpdir(), "berth-demo-agent");

export const demoAgentUsage = `usage: berth-demo-agent [--state-dir DIR] [--no-load] [--silent-settings] [--require-auth] [--record FILE] [--busy-prompt HOW] [--batch-writes]
  --state-dir DIR   where conversations are kept (default $${stateDirEnv}, then ${defaultStateDir})
  --no-load         neither advertise nor serve session/load and session/resume
  --silent-settings session/set_mode and session/set_config_option send no update (as opencode)
  --require-auth    session/new, load and resume fail with -32000 until authenticate
                    succeeds with method "demo-token" (or $${requireAuthEnv}=1)
  --record FILE     append every JSON-RPC message received and sent to FILE as NDJSON
                    {"pid":...,"direction":"in"|"out","message":...} (or $${recordEnv}=FILE)
  --busy-prompt HOW what a prompt sent while a turn runs gets: refuse (-32600, the default),
                    queue (runs after the running turn), queue-past-cancel (queued, and
                    session/cancel ends only the running turn), cancel (the running turn
                    ends cancelled, then it runs) (or $${busyPromptEnv}=HOW)
  --list-sessions HOW what session/list does: serve (the stored conversations, the
                    default), fail (-32603), hang (never answers) (or $${listSessionsEnv}=HOW)
  --batch-writes    what the agent sends within two turns of its event loop goes to stdout in one
                    write (as an agent that buffers its output), e.g. a prompt's answer and the
                    first request for the prompt it queued (or $${batchWritesEnv}=1)`;

export interface DemoAgentCliOptions extends Omit<DemoAgentOptions, "writeLine"> {
  /** Where to record the wire messages; absent when not recording. */
  recordFile?: string;
  /** Write to stdout once per two turns of the event loop (`--batch-writes`). */
  batchWrites: boolean;
}

/**
 * Reads the options of {@link demoAgentUsage}; each falls back to its environment
 * variable, the state dir then to {@link defaultStateDir}. Throws on anything else.
 */
export function parseDemoAgentOptions(argv: string[], env: NodeJS.ProcessEnv): DemoAgentCliOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      "state-dir": { type: "string" },
      "no-load": { type: "boolean" },
      "silent-settings": { type: "boolean" },
      "require-auth": { type: "boolean" },
      record: { type: "string" },
      "busy-prompt": { type: "string" },
      "list-sessions": { type: "string" },
      "batch-writes": { type: "boolean" },
    },
    strict: true,
    allowPositionals: false,
  });
  const stateDir = values["state-dir"] ?? env[stateDirEnv] ?? defaultStateDir;
  if (stateDir === "") {
    throw new Error(`--state-dir (or ${stateDirEnv}) must not be empty`);
  }
  const recordFile = values.record ?? env[recordEnv];
  if (recordFile === "") {
    throw new Error(`--record (or ${recordEnv}) must not be empty`);
  }
  const busyPrompt = values["busy-prompt"] ?? env[busyPromptEnv] ?? "refuse";
  if (!busyPrompts.includes(busyPrompt as BusyPrompt)) {
    throw new Error(`--busy-prompt (or ${busyPromptEnv}) must be one of ${busyPrompts.join(", ")}, got "${busyPrompt}"`);
  }
  const listSessions = values["list-sessions"] ?? env[listSessionsEnv] ?? "serve";
  if (!listSessionsModes.includes(listSessions as ListSessions)) {
    throw new Error(`--list-sessions (or ${listSessionsEnv}) must be one of ${listSessionsModes.join(", ")}, got "${listSessions}"`);
  }
  return {
    stateDir: resolve(stateDir),
    busyPrompt: busyPrompt as BusyPrompt,
    listSessions: listSessions as ListSessions,
    loadSessions: !values["no-load"],
    announceSettings: !values["silent-settings"],
    requireAuth: values["require-auth"] ?? flag(requireAuthEnv, env[requireAuthEnv]),
    batchWrites: values["batch-writes"] ?? flag(batchWritesEnv, env[batchWritesEnv]),
    ...(recordFile === undefined ? {} : { recordFile: resolve(recordFile) }),
  };
}

/** An on/off environment variable: unset, empty or `0` is off, `1` is on. */
function flag(name: string, value: string | undefined): boolean {
  if (value === undefined || value === "" || value === "0") return false;
  if (value === "1") return true;
  throw new Error(`${name} must be 1 or 0, got "${value}"`);
}
