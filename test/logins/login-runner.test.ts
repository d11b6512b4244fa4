import { afterEach, describe, expect, it } from "vitest";
import { LoginBusyError, LoginRunner, type LoginAttachment } from "../../src/logins/login-runner.js";
import { descendantsOf, processIsRunning, waitUntil } from "../support/process-table.js";
import { fixtureLogins as resolve } from "./fixture-logins.js";

const runners: LoginRunner[] = [];
function runner(detachGraceMs = 60_000): LoginRunner {
  const made = new LoginRunner({ resolve, log: () => undefined, detachGraceMs, stop: { graceMs: 1_000 } });
  runners.push(made);
  return made;
}

/** Everything the attachment showed: its screen, then its output. */
function screenOf(attachment: LoginAttachment): { text: () => string } {
  let text = attachment.screen.toString("utf8");
  attachment.onOutput((chunk) => (text += chunk.toString("utf8")));
  return { text: () => text };
}

afterEach(async () => {
  await Promise.all(runners.splice(0).map((made) => made.close()));
});

describe("LoginRunner", () => {
  it("runs the login in a terminal of the size asked, passes keys, and ends with the command's status", async () => {
    const logins = runner();
    const attachment = await logins.attach("demo-agent", "demo", { cols: 100, rows: 30 });
    const screen = screenOf(attachment);
    await waitUntil(() => screen.text().includes("Name: "), "the login screen is shown");
    expect(screen.text()).toContain("terminal: tty 100x30");
    expect(logins.list()).toEqual([expect.objectContaining({ agentId: "demo-agent", methodId: "demo", clients: 1 })]);
    attachment.write("ada\r");
    expect(await attachment.exited).toEqual({ exitCode: 0, signal: null });
    await waitUntil(() => screen.text().includes("logged in as ada"), "the login's last words are shown");
    // The terminal echoed the name typed, as a terminal does.
    expect(screen.text()).toMatch(/Name: ada\r\n/);
    await waitUntil(() => logins.list().length === 0, "the ended login is no longer listed");
  });

  it("passes the command's failure on as its exit status", async () => {
    const attachment = await runner().attach("demo-agent", "demo", { cols: 80, rows: 24 });
    attachment.write("fail\r");
    expect(await attachment.exited).toEqual({ exitCode: 3, signal: null });
  });

  it("resizes the terminal: the login sees the new size", async () => {
    const attachment = await runner().attach("demo-agent", "demo", { cols: 80, rows: 24 });
    const screen = screenOf(attachment);
    await waitUntil(() => screen.text().includes("Name: "), "the login screen is shown");
    await attachment.resize({ cols: 132, rows: 40 });
    await waitUntil(() => screen.text().includes("[resized to 132x40]"), "the login saw the new size");
  });

  it("lets a second client join the running login, seeing the screen so far; another method is refused", async () => {
    const logins = runner();
    const first = await logins.attach("demo-agent", "demo", { cols: 80, rows: 24 });
    const firstScreen = screenOf(first);
    await waitUntil(() => firstScreen.text().includes("Name: "), "the login screen is shown");
    const second = await logins.attach("demo-agent", "demo", { cols: 80, rows: 24 });
    expect(second.screen.toString("utf8")).toContain("Demo Agent login");
    expect(logins.list()).toEqual([expect.objectContaining({ clients: 2 })]);
    await expect(logins.attach("demo-agent", "sleep", { cols: 80, rows: 24 })).rejects.toThrow(LoginBusyError);
    const secondScreen = screenOf(second);
    second.write("grace\r");
    await waitUntil(() => firstScreen.text().includes("logged in as grace"), "the first client sees what the second typed");
    await waitUntil(() => secondScreen.text().includes("logged in as grace"), "the second client sees it too");
  });

  it("refuses a method the agent does not offer, naming the ones it does, and keeps no entry for it", async () => {
    const logins = runner();
    await expect(logins.attach("demo-agent", "nope", { cols: 80, rows: 24 })).rejects.toThrow(/no terminal login method "nope".*demo, sleep/);
    expect(logins.list()).toEqual([]);
    const attachment = await logins.attach("demo-agent", "demo", { cols: 80, rows: 24 });
    attachment.write("x\r");
    expect((await attachment.exited).exitCode).toBe(0);
  });

  it("stops a login no client is attached to once the grace period passed, with its whole process group", async () => {
    const logins = runner(200);
    const attachment = await logins.attach("demo-agent", "sleep", { cols: 80, rows: 24 });
    const [login] = logins.list();
    // script puts the login in a session of its own: it is found by Berth's marker, not by the process group.
    let tree: number[] = [];
    await waitUntil(() => (tree = [login!.pid, ...descendantsOf(login!.pid)]).length >= 2, "the login runs under script");
    attachment.detach();
    const status = await attachment.exited;
    expect(status.exitCode === null ? status.signal : status.exitCode).toBeTruthy();
    await waitUntil(() => tree.every((pid) => !processIsRunning(pid)), "the login's whole process tree is gone");
  });

  it("stops a login on request and refuses new ones once closed", async () => {
    const logins = runner();
    const attachment = await logins.attach("demo-agent", "sleep", { cols: 80, rows: 24 });
    expect(await logins.stop("demo-agent", "demo")).toBe(false);
    expect(await logins.stop("demo-agent", "sleep")).toBe(true);
    await attachment.exited;
    await logins.close();
    await expect(logins.attach("demo-agent", "demo", { cols: 80, rows: 24 })).rejects.toThrow(/shutting down/);
  });
});
