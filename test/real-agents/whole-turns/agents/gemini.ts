import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isolatedEnvironment } from "../../../support/real-agents.js";
import type { AgentUnderTest } from "../agent-under-test.js";

export const geminiMain = fileURLToPath(new URL("../../../../node_modules/@google/gemini-cli/bundle/gemini.js", import.meta.url));

/** Without a model name (`auto`) it first asks a router model for a JSON verdict, retrying anything else. */
const model = "local-model";

const interruptedFirstTurn =
  'it does not list, so cannot load, a session whose first turn ended before its answer was recorded ("No previous sessions found for this project" on session/load)';
const noShellOutput =
  "its run_shell_command reports no output to the client (the completed tool call has no content and no rawOutput), though the model gets it";

/**
 * Gemini CLI (`@google/gemini-cli`, `gemini --acp`), pointed at the endpoint by
 * `GOOGLE_GEMINI_BASE_URL` (with it, no `authenticate` is needed): `POST
 * /v1beta/models/MODEL:streamGenerateContent?alt=sse`. Its tools as the model names them:
 * `run_shell_command {command, description}`, `write_file {file_path, content}` (through the
 * client's `fs/*`, which Berth serves). It asks over ACP by default; not asking is `--approval-mode
 * yolo`, which it ignores in a folder it does not trust, hence folder trust off in its settings.
 */
export const gemini: AgentUnderTest = {
  id: "gemini",
  available: () => existsSync(geminiMain),
  unavailableReason: "@google/gemini-cli is not installed: run npm ci",
  prepare: async ({ home, cwd, endpointUrl, askPermission }) => {
    const env = isolatedEnvironment(home, cwd);
    mkdirSync(join(home, ".gemini"), { mode: 0o700 });
    const settings = {
      security: { folderTrust: { enabled: false } },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    };
    writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify(settings, null, 2), { mode: 0o600 });
    return {
      command: process.execPath,
      args: [geminiMain, "--acp", ...(askPermission ? [] : ["--approval-mode", "yolo"])],
      env: { ...env, GOOGLE_GEMINI_BASE_URL: endpointUrl, GEMINI_API_KEY: "x", GEMINI_MODEL: model },
    };
  },
  shellTool: (command) => ({ name: "run_shell_command", input: { command, description: "Runs a command for the test" } }),
  writeTool: (path, content) => ({ name: "write_file", input: { file_path: path, content } }),
  allowOnceOptionKind: "allow_once",
  // gemini.test.ts checks what it does instead.
  cannot: {
    "write-and-run":
      "its write_file cannot create a file through an ACP client's fs/* (it takes the client's not-found error for a failure: it looks for ENOENT in an Error's message, and its ACP library rejects with the plain JSON-RPC error object); " +
      noShellOutput,
    permission: noShellOutput,
    restart: interruptedFirstTurn,
    cap: interruptedFirstTurn,
  },
};
