import { afterAll, describe, expect, it } from "vitest";
import { dashboardSuite, openPage, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 30_000, interval: 50 };
const suite = dashboardSuite();
let opened: OpenedPage | undefined;

afterAll(async () => {
  await opened?.close();
});

describe("a sandbox from the dashboard", () => {
  it("the New session dialog's Sandbox asks for one; the conversation's details show Sandboxed with what it may write", async () => {
    opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}`);
    const { page } = opened;
    await page.getByRole("button", { name: "New session" }).click();
    const dialog = page.getByRole("dialog", { name: "New session" });
    await dialog.getByLabel("Directory").fill(suite.server.workDir);
    await dialog.getByRole("checkbox", { name: "Sandbox" }).check();
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL(/#\/sessions\//);
    const sessionId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
    expect(suite.server.berth.host.getSession(sessionId)?.sandbox).toMatchObject({ mode: "workspace-write" });

    const chip = page.locator("#chat-details .badge", { hasText: "Sandboxed" });
    await chip.waitFor();
    await expect.poll(() => chip.getAttribute("title"), POLL).toContain(`Writes only in: ${suite.server.workDir}`);

    // Without the box ticked, the session takes the host's configuration: none here.
    await page.getByRole("button", { name: "New session" }).click();
    await dialog.getByLabel("Directory").fill(suite.server.workDir);
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL((url) => !url.hash.endsWith(encodeURIComponent(sessionId)) && url.hash.startsWith("#/sessions/"));
    const plainId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
    expect(suite.server.berth.host.getSession(plainId)?.sandbox).toBeNull();
    await page.locator("#chat-details").waitFor();
    await expect.poll(() => page.locator("#chat-details .badge", { hasText: "Sandboxed" }).count(), POLL).toBe(0);
  });
});
