import { execFile } from "node:child_process";
import { readlinkSync } from "node:fs";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { fixtureLogins } from "../logins/fixture-logins.js";
import { loginInTerminal, stopLoginTerminals } from "../logins/login-in-terminal.js";
import { cleanUp, startFixture, waitUntil, type BerthFixture } from "../server/server-harness.js";
import { descendantsOf } from "../support/process-table.js";

const execFileAsync = promisify(execFile);

/** The device a process's stdin is; undefined once it is gone. */
function terminalOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/fd/0`);
  } catch {
    return undefined;
  }
}

let berth: BerthFixture;

afterEach(async () => {
  stopLoginTerminals();
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

  it("resizes the login when its own terminal is resized (SIGWINCH)", async () => {
    berth = await startFixture({ loginCommands: fixtureLogins });
    const login = loginInTerminal(berth, "--agent", "demo", "--method", "demo");
    await waitUntil(() => login.screen().includes("Name: "), "the login screen is shown", 20_000);
    // berth login's terminal: the device its stdin is, under script.
    const device = descendantsOf(login.pid)
      .map(terminalOf)
      .find((path) => path?.startsWith("/dev/pts/"));
    await execFileAsync("stty", ["-F", device!, "rows", "40", "cols", "120"]);
    await waitUntil(() => login.screen().includes("[resized to 120x40]"), "the login saw the new size");
    login.type("ada\r");
    expect(await login.exited).toBe(0);
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
