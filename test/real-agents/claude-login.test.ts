import { afterEach, describe, it } from "vitest";
import { loginInTerminal, stopLoginTerminals } from "../logins/login-in-terminal.js";
import { cleanUp, startFixture, tempDir, waitUntil } from "../server/server-harness.js";
import { realAgentInstalled, writeOfflineSetup } from "../support/real-agents.js";

const installed = realAgentInstalled("claude");

afterEach(async () => {
  stopLoginTerminals();
  await cleanUp();
});

describe.skipIf(!installed)(
  `claude-agent-acp's terminal login through berth login${installed ? "" : " (skipped: not installed; run npm ci)"}`,
  () => {
    it("reaches Claude Code's first screen (offline it can go no further)", async () => {
      const home = tempDir("berth-claude-login-home-");
      const agent = writeOfflineSetup("claude", { home, cwd: home, modelUrl: "http://127.0.0.1:9" });
      // A login has no key yet; the rest of the offline setup (its own HOME and config dir, no traffic) stays.
      const { ANTHROPIC_API_KEY: _key, ANTHROPIC_BASE_URL: _url, ...env } = agent.env;
      // No resolver given: the host runs the command claude-agent-acp itself advertises for claude-login.
      const berth = await startFixture({ config: { agents: { claude: { ...agent, env } } } });
      const login = loginInTerminal(berth, "--agent", "claude", "--method", "claude-login");
      // Its words are apart by cursor moves, not spaces: escape sequences count as spaces here.
      const text = () => login.screen().replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;?<>]*[a-zA-Z]`, "g"), " ");
      await waitUntil(() => /Welcome\s*to\s*Claude\s*Code/.test(text()), "Claude Code's welcome screen is shown", 30_000);
    });
  },
);
