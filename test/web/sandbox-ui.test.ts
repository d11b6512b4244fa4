import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardSuite, openPage, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 30_000, interval: 50 };
// A home of the test's own, outside /tmp (every sandbox has a private /tmp), so a refused write is refused there.
const root = realpathSync(mkdtempSync("/var/tmp/berth-sandbox-ui-"));
const home = join(root, "home");
const savedHome = process.env.HOME;
beforeAll(() => {
  mkdirSync(home);
  // Before the host starts: it and its agents take the home from here.
  process.env.HOME = home;
});
const suite = dashboardSuite();
let opened: OpenedPage | undefined;

afterAll(async () => {
  await opened?.close();
  process.env.HOME = savedHome;
  rmSync(root, { recursive: true, force: true });
});

describe("a sandbox from the dashboard", () => {
  it("the New session dialog's Sandbox asks for one; the conversation's details show Sandboxed with what it may write", async () => {
    opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}`);
    const { page } = opened;
    await page.getByRole("banner").getByRole("button", { name: "New session" }).click();
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
    await page.getByRole("banner").getByRole("button", { name: "New session" }).click();
    await dialog.getByLabel("Directory").fill(suite.server.workDir);
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL((url) => !url.hash.endsWith(encodeURIComponent(sessionId)) && url.hash.startsWith("#/sessions/"));
    const plainId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
    expect(suite.server.berth.host.getSession(plainId)?.sandbox).toBeNull();
    await page.locator("#chat-details").waitFor();
    await expect.poll(() => page.locator("#chat-details .badge", { hasText: "Sandboxed" }).count(), POLL).toBe(0);
  });

  it("a command refused a write outside the session's directory says why under its tool call, in words", async () => {
    const { workDir, berth } = suite.server;
    const session = await berth.host.createSession({ cwd: workDir, sandbox: { mode: "workspace-write" } });
    await opened?.close();
    opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions/${session.id}`);
    const { page } = opened;
    const planted = join(home, "planted.txt");
    const box = page.getByLabel("Message to the agent");
    await box.fill(`/run echo planted > ${planted}`);
    await box.press("Enter");
    const call = page.getByRole("article", { name: /Tool call: echo planted/ });
    await call.locator(".badge", { hasText: "failed" }).waitFor();
    const refusal = call.locator(".sandbox-refusal");
    await expect
      .poll(() => refusal.textContent(), POLL)
      .toMatch(new RegExp(`^This session is sandboxed: it may write only in ${workDir}, .* ${planted} is outside, so the write was refused\\.$`));
    expect(existsSync(planted)).toBe(false);
    expect(opened.errors).toEqual([]);
  });
});
