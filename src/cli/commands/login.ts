import type { Command } from "commander";
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
      runClientCommand("login", async () => {
        const { methods } = await callHost<{ methods: { id: string; type: string }[] }>(
          flags,
          `/api/agents/${encodeURIComponent(flags.agent)}/logins`,
        );
        // An agent's own login (a browser's, often) is finished by pasting an address; any other runs in a terminal on the host.
        if (methods.find((method) => method.id === flags.method)?.type === "agent") {
          const { runAgentLogin } = await import("../agent-login-flow.js");
          return runAgentLogin(flags, flags.agent, flags.method, { input: process.stdin, output: process.stdout });
        }
        const { url, token } = locateHost(flags);
        const { attachLoginTerminal } = await import("../login-terminal-client.js");
        process.exitCode = await attachLoginTerminal({
          url,
          token,
          agentId: flags.agent,
          methodId: flags.method,
          input: process.stdin,
          output: process.stdout,
        });
      }),
    );
}
