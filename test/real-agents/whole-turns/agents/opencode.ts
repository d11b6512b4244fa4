import { realAgentInstalled, writeOfflineSetup } from "../../../support/real-agents.js";
import type { AgentUnderTest } from "../agent-under-test.js";

/**
 * opencode (`opencode-ai`, `opencode acp`), pointed at the endpoint by an `opencode.json` in the
 * session's cwd: an `@ai-sdk/openai-compatible` provider whose `baseURL` is the endpoint's `/v1`
 * (OpenAI Chat Completions, streamed). Its tools as the model names them: `bash {command,
 * description}`, `write {filePath, content}`.
 */
export const opencode: AgentUnderTest = {
  id: "opencode",
  available: () => realAgentInstalled("opencode"),
  unavailableReason: "opencode-ai is not installed (node_modules/.bin/opencode missing): run npm ci",
  prepare: async ({ home, cwd, endpointUrl, askPermission }) => writeOfflineSetup("opencode", { home, cwd, modelUrl: endpointUrl, askPermission }),
  shellTool: (command) => ({ name: "bash", input: { command, description: "Runs a command for the test" } }),
  writeTool: (path, content) => ({ name: "write", input: { filePath: path, content } }),
  allowOnceOptionKind: "allow_once",
};
