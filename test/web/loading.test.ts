import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { dashboardSuite, desktop, openPage, phone, screenshot, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 30_000, interval: 50 };

const suite = dashboardSuite();
let opened: OpenedPage | undefined;

afterEach(async ({ task }) => {
  if (task.result?.state === "fail" && opened && !opened.page.isClosed())
    await screenshot(opened.page, `failed-loading-${task.name.replace(/\W+/g, "-").slice(0, 50)}`);
  await opened?.close();
  opened = undefined;
});

/**
 * The chunks of the dashboard's script the page asked for, by the module each is named after (Vite
 * names a chunk after its first module: `ChatPanel-<hash>.js` holds the chat, `acp-link-<hash>.js` the
 * ACP SDK and the link).
 */
function scriptsLoaded(page: Page): Set<string> {
  const loaded = new Set<string>();
  page.on("request", (request) => {
    const name = /\/assets\/([\w-]+?)-[\w-]{8}\.js$/.exec(request.url())?.[1];
    if (name) loaded.add(name);
  });
  return loaded;
}

/** The session's line in the list. */
const sessionLink = (page: Page, sessionId: string) => page.locator(`li.session-row[data-session-id="${sessionId}"] a`);

/** Records, at every animation frame from the page's start, whether the page shows the list without the chat. */
const OVERVIEW_ALONE = `
  window.__framesWithoutChat = 0;
  window.__framesWithChat = 0;
  const sample = () => {
    const main = document.querySelector("main.layout");
    if (main && main.classList.contains("with-chat")) window.__framesWithChat++;
    else if (main) window.__framesWithoutChat++;
    requestAnimationFrame(sample);
  };
  requestAnimationFrame(sample);
`;

describe("the dashboard's first load", () => {
  it("evaluates only what a page needs: the list neither the chat nor the ACP SDK, a session read the chat only, holding it the SDK", async () => {
    const { berth, url, token, workDir } = suite.server;
    const sessionId = (await berth.host.createSession({ cwd: workDir })).id;

    let loaded = new Set<string>();
    opened = await openPage(suite.launched.browser, url, `/?token=${token}#/sessions`, desktop, async (page) => {
      loaded = scriptsLoaded(page);
    });
    const { page } = opened;
    await sessionLink(page, sessionId).waitFor();
    expect(loaded.size).toBeGreaterThan(0);
    expect([...loaded]).not.toContain("ChatPanel");
    expect([...loaded]).not.toContain("acp-link");

    // Opening the session reads its journal: the chat's chunk, still not the SDK.
    await sessionLink(page, sessionId).click();
    await page.getByRole("button", { name: "Resume" }).waitFor();
    expect([...loaded]).toContain("ChatPanel");
    expect([...loaded]).not.toContain("acp-link");

    // Holding it (Resume) loads the link and the SDK, and the chat goes live.
    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByRole("button", { name: "Resume" }).waitFor({ state: "detached" });
    await expect.poll(() => [...loaded], POLL).toContain("acp-link");
    await page.getByLabel("Message to the agent").fill("hello after the link loaded");
    await page.getByLabel("Message to the agent").press("Enter");
    await page.getByRole("log", { name: "Conversation" }).getByText("hello after the link loaded").last().waitFor();
    expect(opened.errors).toEqual([]);
  });

  it("opens the chat once its chunk loads, when the first try failed (Berth out of reach a moment)", async () => {
    const { berth, url, token, workDir } = suite.server;
    const sessionId = (await berth.host.createSession({ cwd: workDir })).id;
    let tries = 0;
    opened = await openPage(suite.launched.browser, url, `/?token=${token}#/sessions`, desktop, async (page) => {
      await page.route(/\/assets\/ChatPanel-[\w-]+\.js(\?.*)?$/, (route) => (tries++ === 0 ? route.abort() : route.continue()));
    });
    const { page } = opened;
    await sessionLink(page, sessionId).click();
    await page.getByRole("button", { name: "Resume" }).waitFor({ timeout: POLL.timeout });
    expect(tries).toBeGreaterThanOrEqual(2);
    expect(opened.errors).toEqual([]);
  });

  it("says so when the chat's code cannot be loaded (a page older than the running Berth), and a reload opens it", async () => {
    const { berth, url, token, workDir } = suite.server;
    const sessionId = (await berth.host.createSession({ cwd: workDir })).id;
    let stale = true;
    opened = await openPage(suite.launched.browser, url, `/?token=${token}#/sessions`, desktop, async (page) => {
      await page.route(/\/assets\/ChatPanel-[\w-]+\.js$/, (route) => (stale ? route.fulfill({ status: 404, body: "" }) : route.continue()));
    });
    const { page } = opened;
    await sessionLink(page, sessionId).click();
    const notice = page.getByRole("alert").filter({ hasText: "The chat could not be loaded" });
    await notice.waitFor({ timeout: POLL.timeout });
    stale = false;
    await notice.getByRole("button", { name: "Reload the page" }).click();
    await page.getByRole("button", { name: "Resume" }).waitFor({ timeout: POLL.timeout });
    await notice.waitFor({ state: "detached" });
  });

  for (const [width, options] of [
    ["desktop", desktop],
    ["phone", phone],
  ] as const) {
    it(`opens a session's address on the chat, never a frame of the list alone in its place (${width})`, async () => {
      const { berth, url, token, workDir } = suite.server;
      const sessionId = (await berth.host.createSession({ cwd: workDir })).id;
      opened = await openPage(suite.launched.browser, url, `/?token=${token}#/sessions/${sessionId}`, options, async (page) => {
        await page.addInitScript(OVERVIEW_ALONE);
      });
      const { page } = opened;
      await page.getByRole("button", { name: "Resume" }).waitFor();
      const frames = () =>
        page.evaluate(() => {
          const sampled = globalThis as unknown as { __framesWithoutChat: number; __framesWithChat: number };
          return { withChat: sampled.__framesWithChat, withoutChat: sampled.__framesWithoutChat };
        });
      // Frames with the chat were sampled: the sampler ran, and found no frame without it before them.
      await expect.poll(async () => (await frames()).withChat, POLL).toBeGreaterThan(2);
      expect((await frames()).withoutChat).toBe(0);
      expect(opened.errors).toEqual([]);
    });
  }
});
