import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { realAgentInstalled, writeOfflineSetup } from "../../../support/real-agents.js";
import type { AgentUnderTest } from "../agent-under-test.js";

/**
 * claude-agent-acp (`@zed-industries/claude-agent-acp`), pointed at the endpoint by
 * `ANTHROPIC_BASE_URL` (it calls `HEAD /`, then `POST /v1/messages?beta=true`, streamed; with
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` nothing else). Its tools as the model names them:
 * `Bash {command, description}`, `Write {file_path, content}` (an absolute path). It asks over ACP
 * before both by default; not asking is its `bypassPermissions` mode, set as `permissions.defaultMode`
 * in its user settings (allowed as root only with `IS_SANDBOX=1`, which the setup sets).
 */
export const claude: AgentUnderTest = {
  id: "claude",
  available: () => realAgentInstalled("claude"),
  unavailableReason: "@zed-industries/claude-agent-acp is not installed: run npm ci",
  prepare: async ({ home, cwd, endpointUrl, askPermission }) => {
    const entry = writeOfflineSetup("claude", { home, cwd, modelUrl: endpointUrl });
    const settings = { permissions: { defaultMode: askPermission ? "default" : "bypassPermissions" } };
    const configDir = entry.env.CLAUDE_CONFIG_DIR!;
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(configDir, "settings.json"), JSON.stringify(settings, null, 2), { mode: 0o600 });
    return entry;
  },
  shellTool: (command) => ({ name: "Bash", input: { command, description: "Runs a command for the test" } }),
  writeTool: (path, content) => ({ name: "Write", input: { file_path: path, content } }),
  allowOnceOptionKind: "allow_once",
};
