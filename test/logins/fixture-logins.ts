import { fileURLToPath } from "node:url";
import type { AgentCommand } from "../../src/agents/agent-child.js";
import { NoTerminalLoginError, type LoginCommandResolver } from "../../src/logins/login-command.js";

const fixture = fileURLToPath(new URL("./fixtures/agent-login.mjs", import.meta.url));

/** Method "demo" runs the fixture login; "sleep" a login that never ends by itself; any other is not offered. */
export const fixtureLogins: LoginCommandResolver = async (agentId, methodId): Promise<AgentCommand> => {
  if (methodId === "demo") return { command: process.execPath, args: [fixture], env: { DEMO_AGENT: agentId } };
  if (methodId === "sleep") return { command: "sleep", args: ["600"], env: {} };
  throw new NoTerminalLoginError(agentId, methodId, ["demo", "sleep"]);
};
