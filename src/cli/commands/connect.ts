import type { Command } from "commander";
import { locateHost, runClientCommand, withHostFlags, type HostFlags } from "../host-client.js";

export function register(program: Command): void {
  withHostFlags(
    program.command("connect").description("a stdio bridge to the running host's ACP endpoint, for editors that launch ACP agents as commands"),
  )
    .option("--agent <id>", "the agent this connection speaks for, e.g. for new sessions (default: the host's default agent)")
    .action((flags: HostFlags & { agent?: string }) =>
      runClientCommand("connect", async () => {
        const { url, token } = locateHost(flags);
        const acpUrl = `${url.replace(/^http/, "ws")}/acp`;
        const { bridgeStdio } = await import("../stdio-bridge.js");
        await bridgeStdio({ url: acpUrl, token, agent: flags.agent, input: process.stdin, output: process.stdout });
      }),
    );
}
