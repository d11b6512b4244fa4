import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { realAgentInstalled, writeOfflineSetup } from "../../../support/real-agents.js";
import type { AgentUnderTest } from "../agent-under-test.js";

/**
 * codex-acp (`@zed-industries/codex-acp`, an npm wrapper around a native binary), pointed at the
 * endpoint by a custom model provider in `$CODEX_HOME/config.toml` with `wire_api = "responses"`
 * (`POST /v1/responses`, streamed). Not the built-in OpenAI provider with `openai_base_url`: that
 * one first tries a WebSocket on `/v1/responses` five times (≈6 s per turn, and a "Falling back
 * from WebSockets" message in the transcript) and needs `authenticate`. Its tools as the model
 * names them: `exec_command {cmd}` (a function) and `apply_patch` (a freeform tool whose input is
 * the patch text). It asks over ACP before commands with `approval_policy = "untrusted"`, never
 * with `"never"`; `danger-full-access`: its own sandbox (bubblewrap) off, as the scenarios expect (sandboxed-agent.test.ts turns it on).
 */
export const codex: AgentUnderTest = {
  id: "codex",
  available: () => realAgentInstalled("codex"),
  unavailableReason: "@zed-industries/codex-acp is not installed: run npm ci",
  prepare: async ({ home, cwd, endpointUrl, askPermission }) => {
    const entry = writeOfflineSetup("codex", { home, cwd, modelUrl: endpointUrl });
    // Replaces the built-in-provider configuration the shared setup wrote.
    const config = [
      `model = "gpt-5.4"`,
      `model_provider = "scripted"`,
      `sandbox_mode = "danger-full-access"`,
      `approval_policy = "${askPermission ? "untrusted" : "never"}"`,
      `check_for_update_on_startup = false`,
      ``,
      `[model_providers.scripted]`,
      `name = "Scripted model endpoint"`,
      `base_url = "${endpointUrl}/v1"`,
      `wire_api = "responses"`,
      `env_key = "OPENAI_API_KEY"`,
      ``,
    ];
    writeFileSync(join(entry.env.CODEX_HOME!, "config.toml"), config.join("\n"), { mode: 0o600 });
    return entry;
  },
  // codex hands a command still running after `yield_time_ms` (default 10 s) back to the model, which the script
  // does not expect: 30 s (codex's most) keeps it in the one tool call, also on a loaded machine and past the 10 s cap.
  shellTool: (command) => ({ name: "exec_command", input: { cmd: command, tty: false, yield_time_ms: 30_000 } }),
  writeTool: (path, content) => ({
    name: "apply_patch",
    input: {
      input: [
        "*** Begin Patch",
        `*** Add File: ${path}`,
        ...content
          .replace(/\n$/, "")
          .split("\n")
          .map((line) => `+${line}`),
        "*** End Patch",
        "",
      ].join("\n"),
    },
  }),
  allowOnceOptionKind: "allow_once",
};
