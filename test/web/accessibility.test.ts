// axe-core over every view of the dashboard, light and dark, desktop and phone: no serious or critical violation.
import type { BrowserContextOptions } from "playwright-core";
import { describe, expect, it } from "vitest";
import { fixtureLogins } from "../logins/fixture-logins.js";
import { audit, type Finding } from "./axe-audit.js";
import { dashboardSuite, phone, screenshot } from "./dashboard-harness.js";

const POLL = { timeout: 20_000, interval: 50 };

const suite = dashboardSuite({}, { loginCommands: fixtureLogins });

// The page's CSP allows only its own scripts: axe's script tag is let in by the browser context.
const layouts: [string, BrowserContextOptions][] = [
  ["desktop light", { viewport: { width: 1440, height: 900 }, colorScheme: "light", bypassCSP: true }],
  ["desktop dark", { viewport: { width: 1440, height: 900 }, colorScheme: "dark", bypassCSP: true }],
  ["phone light", { ...phone, colorScheme: "light", bypassCSP: true }],
  ["phone dark", { ...phone, colorScheme: "dark", bypassCSP: true }],
];

describe("accessibility (axe-core)", () => {
  let sessions: { chat: string; question: string } | undefined;
  /** One session with a finished turn, one whose agent waits on a question. */
  async function prepareSessions(): Promise<{ chat: string; question: string }> {
    if (sessions) return sessions;
    const host = suite.server.berth.host;
    const chat = (await host.createSession({ cwd: suite.server.workDir })).id;
    expect((await host.prompt(chat, [{ type: "text", text: "Hello from the accessibility check" }])).stopReason).toBe("end_turn");
    const question = (await host.createSession({ cwd: suite.server.workDir })).id;
    // Left waiting: the host's shutdown ends it.
    host.prompt(question, [{ type: "text", text: "/ask Deploy to production?" }]).catch(() => undefined);
    await expect.poll(() => host.pendingQuestions().length, POLL).toBe(1);
    sessions = { chat, question };
    return sessions;
  }

  // First, while the host has no session: the root address's welcome.
  it.each(layouts)("finds no serious or critical violation on the welcome (no sessions yet), %s", async (name, options) => {
    const context = await suite.launched.browser.newContext(options);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    try {
      await page.goto(`${suite.server.url}/?token=${suite.server.token}`);
      await page.getByRole("region", { name: "Start your first session" }).waitFor();
      expect((await audit(page, "welcome")).map((f) => `${f.view}: ${f.id} (${f.impact}) at ${f.targets.join(", ")}`)).toEqual([]);
      expect(errors).toEqual([]);
    } catch (error) {
      await screenshot(page, `accessibility-failed-welcome-${name.replace(/\W+/g, "-")}`);
      throw error;
    } finally {
      await context.close();
    }
  });

  it.each(layouts)("finds no serious or critical violation on any view, %s", { timeout: 120_000 }, async (name, options) => {
    const { chat, question } = await prepareSessions();
    const context = await suite.launched.browser.newContext(options);
    const page = await context.newPage();
    const errors: string[] = [];
    const findings: Finding[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    /**
     * Shows the view at `hash` as the dashboard's own links do, in the same tab: what a view shows follows from its
     * route and the host's state alone, so a tab of its own would render the same page, only after loading it again.
     */
    const show = async (hash: string): Promise<void> => {
      await page.evaluate(`window.location.hash = ${JSON.stringify(hash)}`);
    };
    try {
      await page.goto(`${suite.server.url}/?token=${suite.server.token}#/sessions`);
      await page.getByRole("heading", { name: "Sessions" }).waitFor();
      await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
      await page.locator(".card[data-question-id]").first().waitFor();
      await page.locator("li.session-row .chip", { hasText: "waiting for you" }).waitFor();
      findings.push(...(await audit(page, "the list, with the offer to remember this device and a question waiting")));

      for (const [button, title] of [
        ["Settings", "Settings"],
        ["Keyboard shortcuts", "Keyboard shortcuts"],
        ["New session", "New session"],
      ] as const) {
        await page.getByRole("button", { name: button, exact: true }).click();
        const dialog = page.getByRole("dialog", { name: title });
        await dialog.waitFor();
        // Settings reads the remembered devices: audited once they are shown.
        if (title === "Settings") await dialog.getByText("None: every device needs the link.").waitFor();
        findings.push(...(await audit(page, `${title} dialog`)));
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached" });
      }

      await show("#/host");
      await page.locator(`tr[data-session-id="${question}"] .pid`).waitFor();
      await page
        .getByRole("list", { name: /lifecycle/i })
        .locator("li")
        .first()
        .waitFor();
      findings.push(...(await audit(page, "Host page")));

      await show(`#/sessions/${chat}`);
      await page.getByRole("log", { name: "Conversation" }).locator(".message.agent", { hasText: "Hello from the accessibility check" }).waitFor();
      findings.push(...(await audit(page, "chat")));

      await show(`#/sessions/${question}`);
      await page.getByRole("log", { name: "Conversation" }).getByText("Deploy to production?").first().waitFor();
      findings.push(...(await audit(page, "chat with a question")));

      // Each method by its full name: the dialog stays open from one to the next, only its method changes.
      for (const [method, name] of [
        ["demo-token", "Demo token"],
        ["demo-env", "Demo environment token"],
      ] as const) {
        await show(`#/agents/demo/login/${method}`);
        await page.getByRole("dialog", { name: `Log in to demo: ${name}`, exact: true }).waitFor();
        findings.push(...(await audit(page, `agent login ${method}`)));
      }

      await show("#/agents");
      await page.locator("#agents-heading .count").waitFor();
      findings.push(...(await audit(page, "Agents page")));

      await show("#/agents/demo/login/demo/terminal");
      const panel = page.getByRole("region", { name: "Log in to demo" });
      await expect.poll(() => panel.locator(".xterm-rows").textContent(), POLL).toContain("Name:");
      findings.push(...(await audit(page, "terminal login")));

      expect(findings.map((f) => `${f.view}: ${f.id} (${f.impact}) at ${f.targets.join(", ")}`)).toEqual([]);
      expect(errors).toEqual([]);
    } catch (error) {
      await screenshot(page, `accessibility-failed-${name.replace(/\W+/g, "-")}`);
      throw error;
    } finally {
      await context.close();
    }
  });
});
