import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { catalogueFixture } from "../agents/catalogue-fixture.js";
import { dashboardSuite, desktop, holdRequests, openPage, screenshot, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 60_000, interval: 50 };
const fixture = catalogueFixture();
// Registered first, so it runs last: after the server has stopped the agents that write into the fixture.
afterAll(() => rmSync(fixture.root, { recursive: true, force: true }));
const suite = dashboardSuite({ agentRegistry: fixture.registry });
let opened: OpenedPage | undefined;

afterEach(async ({ task }) => {
  if (task.result?.state === "fail" && opened && !opened.page.isClosed())
    await screenshot(opened.page, `failed-agents-${task.name.replace(/\W+/g, "-").slice(0, 50)}`);
  await opened?.close();
  opened = undefined;
});

describe("the dashboard's Agents page", () => {
  it("installs an agent from the catalogue with its log streamed, shows its login methods, upgrades and removes it", async () => {
    const { url, token, berth } = suite.server;
    opened = await openPage(suite.launched.browser, url, `/?token=${token}`, desktop);
    const { page } = opened;
    await page.getByRole("link", { name: "Agents" }).click();
    await expect.poll(() => new URL(page.url()).hash, POLL).toBe("#/agents");

    const demo = page.getByRole("listitem", { name: "Agent demo", exact: true });
    await demo.getByText("bundled").waitFor();
    await demo.getByText("Login unknown").waitFor();
    // The demo agent's own initialize answer lists two auth methods: one Log in each, which opens its login view.
    await demo.getByRole("button", { name: "Log in to demo with Demo token" }).waitFor();
    await demo.getByRole("button", { name: "Log in to demo with Demo environment token" }).click();
    await expect.poll(() => new URL(page.url()).hash, POLL).toBe("#/agents/demo/login/demo-env");
    // The login view is a dialog of its own; closing it goes back to the agents.
    await page.getByRole("dialog").waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await expect.poll(() => new URL(page.url()).hash, POLL).toBe("#/agents");

    await page.getByRole("listitem", { name: "Registry agent fixture", exact: true }).getByRole("button", { name: "Install fixture" }).click();
    await page.getByText("Installing fixture: done").waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByRole("log", { name: "Install log" }).textContent(), POLL).toContain("$ npm install --prefix");
    const installed = page.getByRole("listitem", { name: "Agent fixture", exact: true });
    await installed.getByText("installed", { exact: true }).waitFor();
    await installed.getByText("version 1.0.0").waitFor();
    expect(berth.host.agents()).toEqual(["demo", "fixture"]);
    await page.getByRole("listitem", { name: "Registry agent fixture", exact: true }).getByText("Installed: version 1.0.0").waitFor();

    // A wrong sha256: refused, the reason on screen, nothing installed.
    await page.getByRole("listitem", { name: "Registry agent broken", exact: true }).getByRole("button", { name: "Install broken" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor({ timeout: 60_000 });
    // In a person's words, as every error of the dashboard: a sentence.
    expect(await alert.textContent()).toContain(
      `The sha256 of ${join(fixture.root, "registry", "fixture-agent.tar.gz")} is ${fixture.sha256}, the registry says ${"0".repeat(64)}: refused`,
    );
    await page.getByText("Installing broken: failed").waitFor();
    expect(existsSync(join(berth.host.dataDir, "agents", "broken"))).toBe(false);

    // The registry moves on: Upgrade installs its version, the log streamed again.
    fixture.publish("1.1.0");
    await page.reload();
    await installed.getByRole("button", { name: "Upgrade to 1.1.0" }).click();
    await page.getByText("Upgrading fixture: done").waitFor({ timeout: 60_000 });
    await installed.getByText("version 1.1.0").waitFor();
    expect(await page.getByRole("log", { name: "Install log" }).textContent()).toContain("installing fixture 1.1.0 (npx)");

    // Asked first: Keep it changes nothing.
    await installed.getByRole("button", { name: "Remove" }).click();
    const confirm = page.getByRole("dialog", { name: "Remove fixture?" });
    await confirm.getByRole("button", { name: "Keep it" }).click();
    await confirm.waitFor({ state: "detached" });
    expect(berth.host.agents()).toContain("fixture");
    await installed.getByRole("button", { name: "Remove" }).click();
    await confirm.getByRole("button", { name: "Remove" }).click();
    await installed.waitFor({ state: "detached" });
    expect(berth.host.agents()).toEqual(["demo"]);
    await page.getByRole("listitem", { name: "Registry agent fixture", exact: true }).getByRole("button", { name: "Install fixture" }).waitFor();
    expect(opened.errors).toEqual([]);
  });

  it("follows an install to its end after the person left the page, so New session offers the agent it installed", async () => {
    const { url, token, berth } = suite.server;
    opened = await openPage(suite.launched.browser, url, `/?token=${token}#/agents`, desktop);
    const { page } = opened;
    // The install's events are held until the person is elsewhere and the host has installed it.
    const events = await holdRequests(page, (address) => /^\/api\/agents\/installs\/[^/]+\/events$/.test(address.pathname));
    await page.getByRole("listitem", { name: "Registry agent fixture", exact: true }).getByRole("button", { name: "Install fixture" }).click();
    await events.asked;
    await page.evaluate(`location.hash = "#/sessions"`);
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await expect.poll(() => berth.host.agents(), POLL).toContain("fixture");
    events.release();
    await page.getByRole("button", { name: "New session" }).first().click();
    const agent = page.getByRole("dialog", { name: "New session" }).getByLabel("Agent");
    await expect.poll(() => agent.locator("option").allTextContents(), POLL).toContain("fixture");
    expect(opened.errors).toEqual([]);
  });
});
