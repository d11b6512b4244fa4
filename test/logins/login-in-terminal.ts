import { spawn, type ChildProcess } from "node:child_process";
import { shellQuote } from "../../src/config/invocation.js";
import type { BerthFixture } from "../server/server-harness.js";
import { cliMain } from "../server/serve-process.js";

const started: ChildProcess[] = [];

/** `berth login …` in a real terminal of 100×30 (util-linux script, in a process group of its own), as an editor's terminal runs it. */
export function loginInTerminal(berth: BerthFixture, ...args: string[]) {
  return berthInTerminal(berth, "login", ...args);
}

/** `berth <command> --url … --token … ARGS…` in a real terminal, as `loginInTerminal`. */
export function berthInTerminal(berth: BerthFixture, subcommand: string, ...args: string[]) {
  const command = ["node", cliMain, subcommand, "--url", berth.url, "--token", berth.token, ...args].map(shellQuote).join(" ");
  const child = spawn("script", ["--quiet", "--return", "--command", `stty rows 30 cols 100; exec ${command}`, "/dev/null"], {
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, SHELL: "/bin/sh" },
  });
  started.push(child);
  let screen = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (screen += text));
  child.stderr.setEncoding("utf8").on("data", (text: string) => (screen += text));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { pid: child.pid!, screen: () => screen, type: (keys: string) => child.stdin.write(keys), exited };
}

/** For `afterEach`: kills the process group of every terminal still running. */
export function stopLoginTerminals(): void {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
}
