import type { Command } from "commander";
import { callHost, locateHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

export function register(program: Command): void {
  withHostFlags(
    program.command("connect").description("a stdio bridge to the running host's ACP endpoint, for editors that launch ACP agents as commands"),
  )
    .option("--agent <id>", "the agent this connection speaks for, e.g. for new sessions (default: the host's default agent)")
    .argument(
      "[login-args...]",
      "the arguments of one of the agent's terminal logins, as an editor appends them to run it (e.g. --cli): runs that login as berth login does",
    )
    // A terminal login's arguments look like options (`--cli`): they are collected, not refused.
    .allowUnknownOption()
    .action((loginArgs: string[], flags: HostFlags & { agent?: string }) =>
      runClientCommand("connect", async () => {
        if (loginArgs.length > 0) {
          const { runTerminalLoginByArgs } = await import("../terminal-login-by-args.js");
          return runTerminalLoginByArgs(flags, flags.agent ?? (await callHost<{ default: string }>(flags, "/api/agents")).default, loginArgs);
        }
        const { url, token } = locateHost(flags);
        const acpUrl = `${url.replace(/^http/, "ws")}/acp`;
        const { bridgeStdio } = await import("../stdio-bridge.js");
        await bridgeStdio({ url: acpUrl, token, agent: flags.agent, input: process.stdin, output: process.stdout });
      }),
    );
}
