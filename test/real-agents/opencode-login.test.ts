import { afterEach, describe, it } from "vitest";
import { loginInTerminal, stopLoginTerminals } from "../logins/login-in-terminal.js";
import { cleanUp, startFixture, tempDir, waitUntil } from "../server/server-harness.js";
import { realAgentInstalled, writeOfflineSetup } from "../support/real-agents.js";

const installed = realAgentInstalled("opencode");

afterEach(async () => {
  stopLoginTerminals();
  await cleanUp();
});

describe.skipIf(!installed)(`opencode's terminal login through berth login${installed ? "" : " (skipped: not installed; run npm ci)"}`, () => {
  it("runs opencode auth login in a terminal on the host (its method names the command in _meta, with no ACP type)", async () => {
    const home = tempDir("berth-opencode-login-home-");
    const agent = writeOfflineSetup("opencode", { home, cwd: home, modelUrl: "http://127.0.0.1:9" });
    const berth = await startFixture({ config: { agents: { opencode: agent } } });
    const login = loginInTerminal(berth, "--agent", "opencode", "--method", "opencode-login");
    // Its words are apart by cursor moves, not spaces: escape sequences count as spaces here.
    const text = () => login.screen().replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;?<>]*[a-zA-Z]`, "g"), " ");
    await waitUntil(() => /Add\s*credential/.test(text()) && /Select\s*provider/.test(text()), "opencode's provider list is shown", 30_000);
  });
});
