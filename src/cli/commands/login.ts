import type { Command } from "commander";
import type { AuthMethodView } from "../../protocol/auth-methods.js";
import { callHost, locateHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

export function register(program: Command): void {
  withHostFlags(
    program
      .command("login")
      .description(
        "log an agent in on the host from this terminal (what an editor's Login button opens): its terminal login here, or its own login's address",
      ),
  )
    .requiredOption("--agent <id>", "the agent to log in to")
    .requiredOption("--method <id>", "the agent's auth method, e.g. claude-login")
    .action((flags: HostFlags & { agent: string; method: string }) =>
      runClientCommand("login", async () => logIn(flags, flags.agent, flags.method, await loginMethodsOf(flags, flags.agent))),
    );
}

/** The agent's auth methods as the host reads them (`GET /api/agents/:id/logins`). */
export async function loginMethodsOf(flags: HostFlags, agentId: string): Promise<AuthMethodView[]> {
  const { methods } = await callHost<{ methods: AuthMethodView[] }>(flags, `/api/agents/${encodeURIComponent(agentId)}/logins`);
  return methods;
}

/** Logs the agent in with `methodId` from this terminal, as `berth login` does; the login's status becomes the exit code. */
export async function logIn(flags: HostFlags, agentId: string, methodId: string, methods: readonly AuthMethodView[]): Promise<void> {
  // An agent's own login (a browser's, often) is finished by pasting an address; any other runs in a terminal on the host.
  if (methods.find((method) => method.id === methodId)?.type === "agent") {
    const { runAgentLogin } = await import("../agent-login-flow.js");
    return runAgentLogin(flags, agentId, methodId, { input: process.stdin, output: process.stdout });
  }
  const { url, token } = locateHost(flags);
  const { attachLoginTerminal } = await import("../login-terminal-client.js");
  process.exitCode = await attachLoginTerminal({ url, token, agentId, methodId, input: process.stdin, output: process.stdout });
}
