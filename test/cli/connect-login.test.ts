import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LoginCommandResolver } from "../../src/logins/login-command.js";
import { fixtureLogins } from "../logins/fixture-logins.js";
import { berthInTerminal, stopLoginTerminals } from "../logins/login-in-terminal.js";
import { cleanUp, startFixture, waitUntil } from "../server/server-harness.js";

const oauthAgent = join(import.meta.dirname, "../server/fixtures/oauth-agent.mjs");
/** The fixture agent's terminal method "console" (args ["--login"]) runs the fixture login screen. */
const consoleLogin: LoginCommandResolver = (agentId, methodId) => fixtureLogins(agentId, methodId === "console" ? "demo" : methodId);

afterEach(async () => {
  stopLoginTerminals();
  await cleanUp();
});

function start() {
  return startFixture({
    config: { agents: { oauth: { command: process.execPath, args: [oauthAgent] } }, defaultAgent: "oauth" },
    loginCommands: consoleLogin,
  });
}

describe("berth connect with a terminal login's arguments (what an editor runs for ACP's terminal auth)", () => {
  it("runs the agent's terminal login whose args match, as berth login does, and exits with its status", async () => {
    const berth = await start();
    const login = berthInTerminal(berth, "connect", "--agent", "oauth", "--login");
    await waitUntil(() => login.screen().includes("Name: "), "the login screen is shown", 20_000);
    expect(login.screen()).toContain("terminal: tty 100x30");
    login.type("ada\r");
    expect(await login.exited).toBe(0);
    expect(login.screen()).toContain("logged in as ada");
  });

  it("uses the host's default agent when --agent is not given", async () => {
    const berth = await start();
    const login = berthInTerminal(berth, "connect", "--login");
    await waitUntil(() => login.screen().includes("Name: "), "the login screen is shown", 20_000);
    login.type("fail\r");
    expect(await login.exited).toBe(3);
  });

  it("names the agent's terminal logins and their args when none matches, and exits 2", async () => {
    const berth = await start();
    const login = berthInTerminal(berth, "connect", "--agent", "oauth", "later");
    expect(await login.exited).toBe(2);
    expect(login.screen()).toContain(
      'berth connect: agent "oauth" has no terminal login with the arguments later; its terminal logins: console (--login)',
    );
  });

  it("a mistyped option that is no terminal login's arguments is an unknown option, exit 2", async () => {
    const berth = await start();
    const login = berthInTerminal(berth, "connect", "--agnet", "oauth");
    expect(await login.exited).toBe(2);
    expect(login.screen()).toContain(
      'berth connect: unknown option --agnet (nor are "--agnet oauth" the arguments of a terminal login of agent "oauth": its terminal logins: console (--login))',
    );
  });
});
