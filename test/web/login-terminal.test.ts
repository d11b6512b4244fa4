import { describe, expect, it } from "vitest";
import { fixtureLogins } from "../logins/fixture-logins.js";
import { dashboardSuite, desktop, openPage, phone, screenshot } from "./dashboard-harness.js";

const suite = dashboardSuite({}, { loginCommands: fixtureLogins });

describe("an agent's terminal login in the dashboard", () => {
  it("shows the login screen in a terminal at its address, takes what is typed, and says how it ended", async () => {
    const requested: string[] = [];
    const opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}`, desktop, async (page) => {
      page.on("request", (request) => requested.push(request.url()));
    });
    try {
      const { page } = opened;
      await page.getByRole("heading", { name: "Sessions" }).waitFor();
      // xterm is a chunk of its own: the overview never asks for it.
      expect(requested.filter((url) => url.includes("/assets/login-terminal-"))).toEqual([]);
      await page.evaluate("window.location.hash = '#/agents/demo/login/demo/terminal'");
      const panel = page.getByRole("region", { name: "Log in to demo" });
      const screen = panel.locator(".xterm-rows");
      await expect.poll(() => screen.textContent(), { timeout: 20_000 }).toContain("Demo Agent login");
      await expect.poll(() => screen.textContent()).toContain("Name:");
      // The terminal was fitted to the panel, not left at 80×24.
      expect(await screen.textContent()).not.toContain("terminal: tty 80x24");
      await expect.poll(() => panel.getByRole("status").textContent()).toContain("Running on the host");
      await page.keyboard.type("ada");
      await page.keyboard.press("Enter");
      await expect.poll(() => screen.textContent()).toContain("logged in as ada");
      expect(requested.filter((url) => url.includes("/assets/login-terminal-")).length).toBeGreaterThan(0);
      await expect.poll(() => panel.getByRole("status").textContent()).toBe("The login ended successfully (exit status 0).");
      await screenshot(page, "login-terminal-desktop");
      await panel.getByRole("button", { name: "Close" }).click();
      await expect.poll(() => page.evaluate("window.location.hash")).toBe("#/agents");
      expect(await panel.count()).toBe(0);
      expect(opened.errors).toEqual([]);
    } finally {
      await opened.close();
    }
  });

  it("says the login failed, with its status, on a phone", async () => {
    const opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/agents/demo/login/demo/terminal`, phone);
    try {
      const { page } = opened;
      const panel = page.getByRole("region", { name: "Log in to demo" });
      await expect.poll(() => panel.locator(".xterm-rows").textContent(), { timeout: 20_000 }).toContain("Name:");
      await panel.locator(".xterm-helper-textarea").focus();
      await page.keyboard.type("fail");
      await page.keyboard.press("Enter");
      await expect.poll(() => panel.getByRole("status").textContent()).toBe("The login failed (exit status 3).");
      expect(opened.errors).toEqual([]);
    } finally {
      await opened.close();
    }
  });

  it("says why when the host will not start the login", async () => {
    const opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/agents/demo/login/nope/terminal`);
    try {
      const status = opened.page.getByRole("region", { name: "Log in to demo" }).getByRole("status");
      await expect.poll(() => status.textContent(), { timeout: 20_000 }).toMatch(/could not go on: the host refused or could not start this login/);
    } finally {
      await opened.close();
    }
  });
});
