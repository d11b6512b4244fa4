import { afterEach, describe, expect, it } from "vitest";
import { fixtureLogins } from "../logins/fixture-logins.js";
import { loginInTerminal, stopLoginTerminals } from "../logins/login-in-terminal.js";
import { cleanUp, startFixture, waitUntil, type BerthFixture } from "../server/server-harness.js";

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
