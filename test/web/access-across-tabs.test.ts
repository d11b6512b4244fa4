// Access across tabs: the visit through the printed link offers to remember the device in one click;
// after it, a new tab at a session's address (a bookmark, a webhook's link) opens directly, until the token rotates.
import type { BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { dashboardSuite, desktop, phone, screenshot } from "./dashboard-harness.js";

const suite = dashboardSuite();

const transcript = (page: Page) => page.getByRole("log", { name: "Conversation" });
const refused = (page: Page) => page.getByRole("heading", { name: "Open the link Berth printed" });

async function newTab(context: BrowserContext, address: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(address);
  return page;
}

describe("access across tabs", () => {
  it("the printed link offers Remember this device; one click, and a new tab at a session's address opens directly; a rotated token refuses it", async () => {
    const { server, launched } = suite;
    const sessionId = (await server.berth.host.createSession({ cwd: server.workDir })).id;
    expect((await server.berth.host.prompt(sessionId, [{ type: "text", text: "Reachable from a bookmark" }])).stopReason).toBe("end_turn");
    const sessionAddress = `${server.url}/#/sessions/${sessionId}`;
    const context = await launched.browser.newContext(desktop);
    try {
      const first = await newTab(context, `${server.url}/?token=${server.token}`);
      const offer = first.getByRole("region", { name: "Remember this device" });
      await offer.waitFor();
      await screenshot(first, "remember-offer-desktop");
      // Before the click the link's token is this tab's alone: another tab is refused.
      const before = await newTab(context, sessionAddress);
      await refused(before).waitFor();
      await before.close();

      await offer.getByRole("button", { name: "Remember this device" }).click();
      await offer.getByRole("status").filter({ hasText: "Remembered" }).waitFor();

      const bookmark = await newTab(context, sessionAddress);
      await transcript(bookmark).locator(".message.agent", { hasText: "Reachable from a bookmark" }).waitFor();
      expect(await bookmark.evaluate("sessionStorage.getItem('berth.token')")).toBeNull();
      // A tab opened without the link is not offered it again.
      expect(await bookmark.getByRole("region", { name: "Remember this device" }).count()).toBe(0);
      await bookmark.close();
      // (An open tab whose own token the rotation refuses tries the remembered device, and forgets it once refused:
      // this one is closed first, so the tab below is the one that finds the device refused.)
      await first.close();

      const rotated = await fetch(`${server.url}/api/token/rotate`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(await rotated.json()).toEqual({ rotated: true, devicesForgotten: 1 });
      const after = await newTab(context, sessionAddress);
      await refused(after).waitFor();
      await after.getByText("This device was remembered, but its login no longer works").waitFor();
    } finally {
      await context.close();
    }
  });

  it("Not now puts the offer away; the page works as before (a phone, dark)", async () => {
    // (runs after the rotation: the host's token is the new one)
    const { server, launched } = suite;
    const context = await launched.browser.newContext({ ...phone, colorScheme: "dark" });
    try {
      // The list: the root address would open the newest session's conversation, the list hidden on a phone.
      const page = await newTab(context, `${server.url}/?token=${server.berth.token}#/sessions`);
      const offer = page.getByRole("region", { name: "Remember this device" });
      await offer.waitFor();
      await screenshot(page, "remember-offer-phone-dark");
      await offer.getByRole("button", { name: "Not now" }).click();
      await offer.waitFor({ state: "detached" });
      await page.getByRole("heading", { name: "Sessions" }).waitFor();
      expect(await page.evaluate("localStorage.getItem('berth.login')")).toBeNull();
    } finally {
      await context.close();
    }
  });
});
