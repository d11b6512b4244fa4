import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { faviconHref, pageTitle } from "../../web/src/notify/attention.js";
import { dashboardSuite, openPage } from "./dashboard-harness.js";

const POLL = { timeout: 15_000, interval: 50 };

const suite = dashboardSuite();

/**
 * Records what the page asks of the Notification API, then lets the real API do it: a spy on the
 * browser's own object, so the page runs against Chromium's notifications, not a stand-in.
 */
const recordNotifications = `
  const RealNotification = window.Notification;
  const log = { requests: 0, shown: [] };
  window.notificationLog = log;
  window.Notification = class extends RealNotification {
    constructor(title, options = {}) {
      super(title, options);
      log.shown.push({ title, body: options.body ?? "", tag: options.tag ?? "" });
    }
    static async requestPermission() {
      log.requests++;
      return RealNotification.requestPermission();
    }
  };
`;

type Shown = { title: string; body: string; tag: string };
const shown = (page: Page) => page.evaluate("window.notificationLog.shown") as Promise<Shown[]>;
const hasFocus = (page: Page) => page.evaluate("document.hasFocus()") as Promise<boolean>;

/** Another tab in front: this one is away (Playwright otherwise keeps every page focused). Returns the page's CDP session. */
async function putInBackground(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setFocusEmulationEnabled", { enabled: false });
  const other = await page.context().newPage();
  await other.goto(`${suite.server.url}/healthz`);
  await other.bringToFront();
  await expect.poll(() => hasFocus(page), POLL).toBe(false);
  return cdp;
}

describe("the tab's title and icon", () => {
  it("count questions and turns that ended, with a red badge for a question and a green one for a finished turn", () => {
    expect(pageTitle({ questions: 0, turnsEnded: 0 })).toBe("Berth");
    expect(pageTitle({ questions: 1, turnsEnded: 0 })).toBe("(1) 1 question waiting — Berth");
    expect(pageTitle({ questions: 2, turnsEnded: 1 })).toBe("(3) 2 questions waiting, 1 turn ended — Berth");
    expect(faviconHref({ questions: 0, turnsEnded: 0 })).toBe("icon.svg");
    const question = decodeURIComponent(faviconHref({ questions: 1, turnsEnded: 0 }));
    expect(question).toContain("fill='#d92d20'");
    expect(question).toContain(">1</text>");
    expect(decodeURIComponent(faviconHref({ questions: 0, turnsEnded: 2 }))).toContain("fill='#179c52'");
    expect(decodeURIComponent(faviconHref({ questions: 12, turnsEnded: 0 }))).toContain(">9+</text>");
  });
});

describe("telling the person in a real browser", () => {
  it("asks for permission from a click, then a question and a finished turn change the title and icon and raise notifications while the tab is away", async () => {
    const opened = await openPage(suite.launched.browser, suite.server.url, "/");
    const { page } = opened;
    const context = page.context();
    await context.addInitScript({ content: recordNotifications });
    await page.goto(`${suite.server.url}/?token=${suite.server.token}`);
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    expect(await page.title()).toBe("Berth");

    await page.getByRole("button", { name: "Settings" }).click();
    const settings = page.getByRole("dialog", { name: "Settings" });
    await settings.getByText("Get a notification when an agent asks a question").waitFor();
    // The person allows it in the browser's prompt (headless Chromium has none: the grant stands for it).
    await context.grantPermissions(["notifications"], { origin: suite.server.url });
    await settings.getByRole("button", { name: "Turn on notifications" }).click();
    await settings.getByText("On: a question or a finished turn raises a notification").waitFor();
    await settings.getByRole("button", { name: "Done" }).click();

    const cdp = await putInBackground(page);

    const host = suite.server.berth.host;
    const session = await host.createSession({ cwd: suite.server.workDir });
    const turn = host.prompt(session.id, [{ type: "text", text: "/ask Deploy to production?" }]);
    await expect.poll(() => page.title(), POLL).toBe("(1) 1 question waiting — Berth");
    const icon = () => page.locator("link[rel='icon']").getAttribute("href");
    expect(decodeURIComponent((await icon()) ?? "")).toContain(">1</text>");
    // Named by the session's title, or its id while the title is on its way.
    await expect
      .poll(() => shown(page), POLL)
      .toEqual([
        { title: expect.stringMatching(/^Question waiting: /), body: "Deploy to production?", tag: `question-${host.pendingQuestions()[0]!.id}` },
      ]);

    // Session changes reach the page coalesced (within 100 ms): the turn's end is named by the title once it is there.
    await expect
      .poll(() => page.locator(`li.session-row[data-session-id="${session.id}"] .session-title`).textContent(), POLL)
      .toBe("/ask Deploy to production?");
    await host.answerQuestion(host.pendingQuestions()[0]!.id, { optionId: "allow" });
    await turn;
    await expect.poll(() => page.title(), POLL).toBe("(1) 1 turn ended — Berth");
    expect(decodeURIComponent((await icon()) ?? "")).toContain("fill='#179c52'");
    await expect
      .poll(async () => (await shown(page)).at(-1), POLL)
      .toEqual({
        title: "Turn ended: /ask Deploy to production?",
        body: "The turn finished.",
        tag: `turn-${session.id}`,
      });
    expect(await page.evaluate("window.notificationLog.requests")).toBe(1);

    // Back to the tab: what it counted was seen.
    await page.bringToFront();
    await expect.poll(() => page.title(), POLL).toBe("Berth");
    expect(await icon()).toBe("icon.svg");

    // While the person looks at the page, a finished turn raises nothing.
    const before = (await shown(page)).length;
    await cdp.send("Emulation.setFocusEmulationEnabled", { enabled: true });
    // The Host page's lifecycle feed shows when the page has seen the turn end.
    await page.getByRole("link", { name: "Host", exact: true }).click();
    await host.prompt(session.id, [{ type: "text", text: "watched" }]);
    await expect
      .poll(
        () =>
          page
            .getByRole("list", { name: /lifecycle/i })
            .locator("li")
            .filter({ hasText: "turn ended" })
            .count(),
        POLL,
      )
      .toBe(2);
    expect(await page.title()).toBe("Berth");
    expect((await shown(page)).length).toBe(before);
    await opened.close();
  });

  it("muted: the title still counts, no notification is raised", async () => {
    const opened = await openPage(suite.launched.browser, suite.server.url, "/");
    const { page } = opened;
    const context = page.context();
    await context.addInitScript({ content: recordNotifications });
    await context.grantPermissions(["notifications"], { origin: suite.server.url });
    await page.goto(`${suite.server.url}/?token=${suite.server.token}`);
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    await page.getByRole("button", { name: "Settings" }).click();
    await page.getByRole("button", { name: "Turn off notifications" }).click();
    await page.getByText("Off for this page").waitFor();
    await page.getByRole("button", { name: "Done" }).click();

    await putInBackground(page);

    const host = suite.server.berth.host;
    const session = await host.createSession({ cwd: suite.server.workDir });
    await host.prompt(session.id, [{ type: "text", text: "quietly" }]);
    await expect.poll(() => page.title(), POLL).toBe("(1) 1 turn ended — Berth");
    expect(await shown(page)).toEqual([]);
    await opened.close();
  });
});
