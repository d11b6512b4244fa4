import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { shellQuote } from "../../src/config/invocation.js";
import { fixtureLogins } from "../logins/fixture-logins.js";
import { cleanUp, startFixture, waitUntil, type BerthFixture } from "../server/server-harness.js";
import { cliMain } from "../server/serve-process.js";

/** `berth login …` in a real terminal of 100×30 (util-linux script), as an editor's terminal runs it. */
function loginInTerminal(berth: BerthFixture, ...args: string[]) {
  const command = ["node", cliMain, "login", "--url", berth.url, "--token", berth.token, ...args].map(shellQuote).join(" ");
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
  return { screen: () => screen, type: (keys: string) => child.stdin.write(keys), exited };
}

const started: ChildProcess[] = [];
let berth: BerthFixture;

afterEach(async () => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
  await cleanUp();
});

describe("berth login", () => {
  it("shows the agent's login screen at the terminal's size, passes what is typed, and exits with the login's status", async () => {
    berth = await startFixture({ loginCommands: fixtureLogins });
    const login = loginInTerminal(berth, "--agent", "demo", "--method", "demo");
    await waitUntil(() => login.screen().includes("Name: "), "the login screen is shown", 20_000);
    expect(login.screen()).toContain("terminal: tty 100x30");
    login.type("ada\r");
    expect(await login.exited).toBe(0);
    expect(login.screen()).toContain("logged in as ada");
  });

  it("exits with the login's failure status", async () => {
    berth = await startFixture({ loginCommands: fixtureLogins });
    const login = loginInTerminal(berth, "--agent", "demo", "--method", "demo");
    await waitUntil(() => login.screen().includes("Name: "), "the login screen is shown", 20_000);
    login.type("fail\r");
    expect(await login.exited).toBe(3);
  });

  it("says in one line why the host refused a method the agent does not offer, and exits 1", async () => {
    berth = await startFixture({ loginCommands: fixtureLogins });
    const login = loginInTerminal(berth, "--agent", "demo", "--method", "nope");
    expect(await login.exited).toBe(1);
    expect(login.screen()).toMatch(/berth login: the host refused the connection \(404\): agent "demo" has no terminal login method "nope"/);
  });
});
