// The dashboard opens on the conversation: a compact session list whose chips say what each agent is doing, the
// operations details on the Host page, the root address back at the last conversation, a welcome with no sessions.
import type { Page } from "playwright-core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { waitUntil } from "../support/process-table.js";
import { dashboardSuite, desktop, openPage, phone, screenshot, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 15_000, interval: 50 };
const suite = dashboardSuite();
const opened: OpenedPage[] = [];

async function open(path = "/", options = desktop): Promise<Page> {
  const page = await openPage(suite.launched.browser, suite.server.url, path, options);
  opened.push(page);
  return page.page;
}

afterEach(async ({ task }) => {
  for (const page of opened.splice(0)) {
    if (task.result?.state === "fail" && !page.page.isClosed())
      await screenshot(page.page, `failed-chat-first-${task.name.replace(/\W+/g, "-").slice(0, 50)}`);
    expect(page.errors).toEqual([]);
    await page.close();
  }
});

afterAll(async () => {
  // Before the suite stops the host: a question left waiting would hold its turn open.
  const host = suite.server?.berth.host;
  for (const question of host?.pendingQuestions() ?? []) await host!.answerQuestion(question.id, { optionId: "allow" });
});

const row = (page: Page, sessionId: string) => page.locator(`li.session-row[data-session-id="${sessionId}"]`);
const hashOf = (page: Page) => decodeURIComponent(new URL(page.url()).hash);

describe("with no sessions", () => {
  it("the root address welcomes, says what Berth does, and New session opens the dialog", async () => {
    const page = await open(`/?token=${suite.server.token}`);
    const welcome = page.getByRole("region", { name: "Start your first session" });
    await welcome.waitFor();
    await expect.poll(() => welcome.textContent(), POLL).toContain("Berth runs coding agents");
    await welcome.getByRole("button", { name: "New session" }).click();
    await page.getByRole("dialog", { name: "New session" }).waitFor();
  });
});

describe("with sessions", () => {
  const ids = { idle: "", working: "", waiting: "", stopped: "", failed: "", crashed: "" };

  it("each session's chip says what its agent is doing: working, waiting for you, idle, stopped, failed", async () => {
    const host = suite.server.berth.host;
    const cwd = suite.server.workDir;
    const idle = await host.createSession({ cwd });
    await host.prompt(idle.id, [{ type: "text", text: "Fix the login bug" }]);
    const stopped = await host.createSession({ cwd });
    const cancelled = host.prompt(stopped.id, [{ type: "text", text: "/sleep 10m" }]);
    await waitUntil(() => host.getSession(stopped.id)?.turnActive === true, "the turn to cancel runs");
    await host.cancel(stopped.id);
    await cancelled;
    const failed = await host.createSession({ cwd });
    await host.prompt(failed.id, [{ type: "text", text: "/fail -32000 the disk is full" }]).catch(() => undefined);
    const crashed = await host.createSession({ cwd });
    await host.prompt(crashed.id, [{ type: "text", text: "/crash" }]).catch(() => undefined);
    const working = await host.createSession({ cwd });
    void host.prompt(working.id, [{ type: "text", text: "/sleep 10m" }]);
    const waiting = await host.createSession({ cwd });
    void host.prompt(waiting.id, [{ type: "text", text: "/ask Deploy the login page?" }]);
    await waitUntil(() => host.getSession(working.id)?.turnActive === true && host.pendingQuestions(waiting.id).length === 1, "working and waiting");
    Object.assign(ids, { idle: idle.id, working: working.id, waiting: waiting.id, stopped: stopped.id, failed: failed.id, crashed: crashed.id });

    const page = await open(`/?token=${suite.server.token}#/sessions`);
    const expected: Record<keyof typeof ids, string> = {
      idle: "idle",
      working: "working",
      waiting: "waiting for you",
      stopped: "stopped",
      failed: "failed",
      crashed: "failed",
    };
    for (const [name, chip] of Object.entries(expected)) {
      await expect
        .poll(
          () =>
            row(page, ids[name as keyof typeof ids])
              .locator(".chip")
              .textContent(),
          POLL,
        )
        .toBe(chip);
    }
    // The failure's reason is on the chip, on hover.
    expect(await row(page, ids.failed).locator(".chip").getAttribute("title")).toContain("the disk is full");
    // The process is not in the list: no pid, no clients.
    expect(await page.locator(".sidebar").textContent()).not.toMatch(/PID|Clients|running for/);
    await screenshot(page, "chat-first-chips");
  });

  it("at 1440×900, at least 15 sessions fit on screen", async () => {
    const host = suite.server.berth.host;
    for (let i = 1; i <= 12; i++) {
      const session = await host.createSession({ cwd: suite.server.workDir });
      host.renameSession(session.id, `Another piece of work number ${i}`);
    }
    const page = await open(`/?token=${suite.server.token}#/sessions`, { ...desktop, viewport: { width: 1440, height: 900 } });
    await expect.poll(() => page.locator("li.session-row").count(), POLL).toBe(18);
    const inside = await page.locator("li.session-row").evaluateAll(
      (rows, height) =>
        rows.filter((item) => {
          const box = item.getBoundingClientRect();
          return box.height > 0 && box.top >= 0 && box.bottom <= height;
        }).length,
      900,
    );
    expect(inside).toBeGreaterThanOrEqual(15);
    await screenshot(page, "chat-first-list-1440");
  });

  it("the Host page, from the top bar, shows each agent process's pid, the locations and the lifecycle feed", async () => {
    const page = await open(`/?token=${suite.server.token}#/sessions`);
    await page.getByRole("link", { name: "Host", exact: true }).click();
    await expect.poll(() => hashOf(page), POLL).toBe("#/host");
    const pid = suite.server.berth.host.getSession(ids.working)?.pid;
    expect(pid).toBeGreaterThan(0);
    const processes = page.getByRole("region", { name: /Agent processes/ });
    await expect.poll(() => processes.locator(`tr[data-session-id="${ids.working}"] .pid`).textContent(), POLL).toBe(String(pid));
    const locations = page.getByRole("region", { name: /Locations/ });
    await expect.poll(() => locations.textContent(), POLL).toContain(suite.server.workDir);
    const feed = page.getByRole("region", { name: "Lifecycle" });
    await expect.poll(() => feed.locator("li").count(), POLL).toBeGreaterThan(0);
    await expect.poll(() => feed.textContent(), POLL).toContain("agent child acquired");
  });

  it("the root address opens the last conversation open, after a reload; the newest session once that one is gone", async () => {
    const page = await open(`/?token=${suite.server.token}#/sessions`);
    await row(page, ids.idle).getByRole("link").click();
    await expect.poll(() => hashOf(page), POLL).toBe(`#/sessions/${ids.idle}`);
    await page.getByRole("heading", { name: "Fix the login bug", level: 2 }).waitFor();
    await page.goto(`${suite.server.url}/`);
    await expect.poll(() => hashOf(page), POLL).toBe(`#/sessions/${ids.idle}`);
    await page.getByRole("heading", { name: "Fix the login bug", level: 2 }).waitFor();

    await suite.server.berth.host.deleteSession(ids.idle);
    await page.goto(`${suite.server.url}/`);
    const newestId = [...suite.server.berth.host.listSessions()].sort((a, b) => b.createdAt - a.createdAt)[0]!.id;
    await expect.poll(() => hashOf(page), POLL).toBe(`#/sessions/${newestId}`);
  });

  it("on a phone the list is one screen, a conversation opens full screen, and Sessions leads back", async () => {
    const page = await open(`/?token=${suite.server.token}#/sessions`, phone);
    const list = page.locator(".sidebar");
    await row(page, ids.failed).waitFor();
    await row(page, ids.failed).getByRole("link").tap();
    await expect.poll(() => hashOf(page), POLL).toBe(`#/sessions/${ids.failed}`);
    const chat = page.locator("section.chat");
    await chat.waitFor();
    await expect.poll(() => list.isVisible(), POLL).toBe(false);
    const box = (await chat.boundingBox())!;
    // The whole width but the page's margins.
    expect(box.width).toBeGreaterThanOrEqual(phone.viewport!.width - 24);
    const back = page.getByRole("link", { name: "Back to the sessions" });
    expect((await back.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    // The header stays short (the phone's rule: at most 120 px) with the way back in it.
    expect((await page.locator(".chat-head").boundingBox())!.height).toBeLessThanOrEqual(120);
    await screenshot(page, "chat-first-phone-chat");
    await back.tap();
    await expect.poll(() => hashOf(page), POLL).toBe("#/sessions");
    await expect.poll(() => list.isVisible(), POLL).toBe(true);
    await expect.poll(() => chat.count(), POLL).toBe(0);
    await screenshot(page, "chat-first-phone-list");
  });
});
