import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { dashboardSuite, desktop, openPage, phone, screenshot } from "./dashboard-harness.js";
import { TAP, tooSmallToTap } from "./tap-targets.js";

const POLL = { timeout: 20_000, interval: 50 };

const suite = dashboardSuite({ releaseGrace: "60s" });

const conversation = (page: Page) => page.getByRole("log", { name: "Conversation" });
const height = async (locator: Locator) => (await locator.boundingBox())?.height ?? 0;

const overflow = (page: Page) => page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth");

async function openChat(page: Page, sessionId: string): Promise<void> {
  await page.goto(`${suite.server.url}/?token=${suite.server.token}#/sessions/${sessionId}`);
  await conversation(page).locator(".message").first().waitFor();
}

describe("the dashboard on a phone (390 × 844)", () => {
  it("gives the conversation most of the screen, folds the header's details behind one tap, and offers 44 px tap targets", async () => {
    const host = suite.server.berth.host;
    const session = await host.createSession({ cwd: suite.server.workDir });
    await host.prompt(session.id, [{ type: "text", text: "hello from the phone test" }]);
    const opened = await openPage(suite.launched.browser, suite.server.url, "/", phone);
    const { page } = opened;
    await openChat(page, session.id);

    const header = page.locator(".chat-head");
    const details = header.getByRole("button", { name: "Details" });
    const mode = header.getByLabel("Mode", { exact: true });
    // Folded: the title and the actions only.
    expect(await details.getAttribute("aria-expanded")).toBe("false");
    expect(await header.locator(".meta").isVisible()).toBe(false);
    expect(await mode.isVisible()).toBe(false);
    expect(await height(header)).toBeLessThanOrEqual(120);
    expect(await height(conversation(page))).toBeGreaterThanOrEqual(0.6 * 844);
    await screenshot(page, "phone-chat-folded");

    // One tap shows the details (the meta line, the agent's Mode control); another folds them again.
    await details.tap();
    expect(await details.getAttribute("aria-expanded")).toBe("true");
    await header.locator(".meta").waitFor();
    await mode.waitFor();
    expect(await tooSmallToTap(page)).toEqual([]);
    expect(await overflow(page)).toBe(0);
    await details.tap();
    await mode.waitFor({ state: "hidden" });

    // The list: its controls (the "Waiting for me" checkbox's label among them) are as easy to tap, with no keyboard hint.
    await page.getByRole("link", { name: "Back to the sessions" }).tap();
    const search = page.getByLabel("Search session titles");
    await search.waitFor();
    expect(await search.getAttribute("placeholder")).toBe("Search titles");
    expect(await height(page.locator("label.check", { hasText: "Waiting for me" }))).toBeGreaterThanOrEqual(TAP);
    expect(await overflow(page)).toBe(0);
    expect(await tooSmallToTap(page)).toEqual([]);
    expect(opened.errors).toEqual([]);
    await opened.close();
  });

  it("a wide screen with a keyboard keeps the search's keyboard hint and the header's details unfolded", async () => {
    const host = suite.server.berth.host;
    const session = await host.createSession({ cwd: suite.server.workDir });
    await host.prompt(session.id, [{ type: "text", text: "hello from the desk" }]);
    const opened = await openPage(suite.launched.browser, suite.server.url, "/", desktop);
    const { page } = opened;
    await openChat(page, session.id);
    expect(await page.getByLabel("Search session titles").getAttribute("placeholder")).toBe("Search titles  ( / )");
    await page.locator(".chat-head .meta").waitFor();
    expect(await page.locator(".chat-head").getByRole("button", { name: "Details" }).isVisible()).toBe(false);
    await opened.close();
  });

  it("shows another session's question over the open chat, opens it in one tap, and it is answered there", async () => {
    const host = suite.server.berth.host;
    const reading = await host.createSession({ cwd: suite.server.workDir });
    await host.prompt(reading.id, [{ type: "text", text: "a chat to read" }]);
    const opened = await openPage(suite.launched.browser, suite.server.url, "/", phone);
    const { page } = opened;
    await openChat(page, reading.id);

    const asking = await host.createSession({ cwd: suite.server.workDir });
    const turn = host.prompt(asking.id, [{ type: "text", text: "/ask Deploy to production?" }]);
    const strip = page.getByRole("complementary", { name: "Waiting for you" });
    await strip.getByText("Deploy to production?", { exact: true }).waitFor();
    expect(await height(strip.getByRole("button"))).toBeGreaterThanOrEqual(TAP);
    await screenshot(page, "phone-attention-strip");

    await strip.getByRole("button").tap();
    await page.waitForURL(new RegExp(`#/sessions/${asking.id}$`));
    const question = conversation(page).getByRole("group").filter({ hasText: "Deploy to production?" });
    await question.waitFor();
    // Opened at the question: it has the focus, and its own session's question is not repeated in the strip.
    await expect.poll(() => question.evaluate((row) => row.contains(row.ownerDocument.activeElement)), POLL).toBe(true);
    expect(await strip.count()).toBe(0);
    await question.getByRole("button", { name: "Allow" }).tap();
    await turn;
    await conversation(page).locator(".message.agent", { hasText: "You chose: allow" }).waitFor();
    expect(host.pendingQuestions()).toEqual([]);
    expect(opened.errors).toEqual([]);
    await opened.close();
  });
});

describe("errors in a person's words", () => {
  it("a session in a missing directory is refused naming the directory, without the protocol's wrapping", async () => {
    const opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions`, phone);
    const { page } = opened;
    await page.getByRole("banner").getByRole("button", { name: "New session" }).tap();
    const dialog = page.getByRole("dialog", { name: "New session" });
    const missing = `${suite.server.workDir}/no-such-directory`;
    await dialog.getByLabel("Directory").fill(missing);
    await dialog.getByRole("button", { name: "Start session" }).tap();
    const refusal = dialog.getByText("does not exist");
    await refusal.waitFor();
    const said = (await refusal.textContent()) ?? "";
    expect(said).toContain(missing);
    expect(said).not.toMatch(/Invalid params|Internal error/);
    expect(opened.errors).toEqual([]);
    await opened.close();
  });
});
