import type { Command } from "commander";
import { locateHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

export function register(program: Command): void {
  withHostFlags(
    program
      .command("login")
      .description("run an agent's terminal login on the host, in this terminal (what an editor's Login button opens); exits with its status"),
  )
    .requiredOption("--agent <id>", "the agent to log in to")
    .requiredOption("--method <id>", "the agent's terminal auth method, e.g. claude-login")
    .action((flags: HostFlags & { agent: string; method: string }) =>
      runClientCommand("login", async () => {
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
