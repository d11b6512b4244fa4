import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  desktop,
  launchBrowser,
  openPage,
  scrollTo,
  startDashboardServer,
  waitUntilGone,
  type DashboardServer,
  type LaunchedBrowser,
  type OpenedPage,
} from "./dashboard-harness.js";

/**
 * Agent text that poses as Berth itself: a link styled as Berth's button, an open dialog asking the
 * person to sign in again, a link to a page of its choosing. The demo agent says back what it is sent,
 * so a prompt is a way to make an agent say any Markdown.
 */

const POLL = { timeout: 20_000, interval: 50 };

/** The page's window, as far as these tests use it (the tests are type-checked without the DOM library). */
interface View {
  getComputedStyle(element: unknown): { borderTopStyle: string; display: string };
}

let server: DashboardServer;
let launched: LaunchedBrowser;
let main: OpenedPage;
/** A page on another loopback port, where the agent's link leads: what it was asked for. */
let elsewhere: { server: Server; url: string; requests: string[] };

beforeAll(async () => {
  server = await startDashboardServer({ releaseGrace: "60s" });
  launched = await launchBrowser();
  const requests: string[] = [];
  const page = createServer((req, res) => {
    // The browser asks for a favicon of its own accord.
    if (req.url !== "/favicon.ico") requests.push(req.url ?? "");
    res.writeHead(200, { "Content-Type": "text/html" }).end("<title>Elsewhere</title><p>a page elsewhere</p>");
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  elsewhere = { server: page, url: `http://127.0.0.1:${(page.address() as AddressInfo).port}`, requests };
  const response = await fetch(`${server.url}/api/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json", origin: server.url },
    body: JSON.stringify({ cwd: server.workDir }),
  });
  const { id } = (await response.json()) as { id: string };
  main = await openPage(launched.browser, server.url, `/?token=${server.token}#/sessions/${id}`, desktop);
});

afterAll(async () => {
  await main?.close();
  const browserPids = launched ? await launched.pids().catch(() => []) : [];
  await launched?.browser.close();
  await server?.close();
  await new Promise((resolve) => (elsewhere ? elsewhere.server.close(resolve) : resolve(undefined)));
  elsewhere?.server.closeAllConnections();
  expect(await waitUntilGone([...(server?.childPids() ?? []), ...browserPids])).toEqual([]);
});

const transcript = (page: Page) => page.getByRole("log", { name: "Conversation" });

/** Sends `text` and waits until the agent said it back (the reply containing `reply`), the turn over. */
async function exchange(page: Page, text: string, reply: string) {
  const box = page.getByLabel("Message to the agent");
  await box.fill(text);
  await box.press("Enter");
  const message = transcript(page).locator(".message.agent", { hasText: reply }).last();
  await message.waitFor();
  await expect.poll(() => page.getByRole("button", { name: "Cancel turn" }).isDisabled(), POLL).toBe(true);
  return message;
}

const style = (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((element) => {
      const { borderTopStyle, display } = (element.ownerDocument.defaultView as unknown as View).getComputedStyle(element);
      return { borderTopStyle, display };
    });

/** A one-pixel PNG: an image the page shows, which must not become a link of its own. */
const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("agent text that poses as Berth's own controls", () => {
  it("shows a link with Berth's button class as a plain link, and an open dialog as text: no dialog, and / still searches", async () => {
    const { page } = main;
    const payload = [
      "Fake controls:",
      "",
      '<a class="button primary" id="session-search" href="https://evil.example/allow">Allow once</a>',
      "",
      '<dialog open class="modal"><h2>Your session expired</h2><p>Sign in again</p><form><input name="token" placeholder="Token"><button>Sign in</button></form></dialog>',
      "",
      '<div style="position:fixed;inset:0;z-index:9" popover>cover</div> <details open><summary>more</summary>hidden</details>',
      "",
      `<img src="${PIXEL}" usemap="#m" width="200" height="40" alt="Allow once, as a picture"><map name="m"><area shape="rect" coords="0,0,200,40" href="https://evil.example/phish"></map>`,
      "",
      "```ts",
      "const answer: number = 42;",
      "```",
    ].join("\n");
    const message = await exchange(page, payload, "Fake controls:");
    // None of the agent's: the one button is Berth's own, in the bar it puts above a code block once the text is sanitized.
    expect(
      await message
        .locator(":is(dialog, form, input, button, details, summary, map, area, [usemap], [popover], [style], [id]):not(.code-bar > *)")
        .count(),
    ).toBe(0);
    expect(await message.locator(".code-bar > button").count()).toBe(1);
    expect(await page.locator("dialog[open]").count()).toBe(0);
    // No class of Berth's own: the link looks like the links around it, not like the page's buttons.
    const fake = message.getByRole("link", { name: "Allow once" });
    expect(await fake.getAttribute("class")).toBeNull();
    const berthButton = await style(page, ".chat-head button");
    const agentLink = await style(page, ".message.agent .md a");
    expect(berthButton.borderTopStyle).toBe("solid");
    expect(agentLink).toMatchObject({ display: "inline", borderTopStyle: "none" });
    // The dialog's words are there, as the agent's text.
    expect(await message.textContent()).toContain("Sign in again");
    // Code is still highlighted (highlight.js's classes, and only those, are kept; the rest are Berth's code bar's).
    await expect.poll(() => message.locator("pre .hljs-keyword").count(), POLL).toBeGreaterThan(0);
    const classes = await message.evaluate((element) =>
      [...element.querySelectorAll(".md [class]")].map((node) => `${node.tagName} ${node.getAttribute("class")}`),
    );
    expect(classes.filter((entry) => !/^(SPAN|CODE) hljs/.test(entry))).toEqual([
      "DIV code-block",
      "DIV code-bar",
      "SPAN code-lang",
      "BUTTON code-copy",
    ]);
    // The search shortcut still works: no dialog of the agent's holds the keys.
    await page.evaluate("document.activeElement.blur()");
    await page.keyboard.press("/");
    await expect.poll(() => page.evaluate("document.activeElement?.id"), POLL).toBe("session-search");
    await page.evaluate("document.activeElement.blur()");
    expect(main.errors).toEqual([]);
  });

  it("opens an agent's link only after a confirm step that shows the whole address", async () => {
    const { page } = main;
    const address = `${elsewhere.url}/docs/setup?step=2&from=agent`;
    const message = await exchange(page, `Read [the setup guide](${address}) first.`, "Read the setup guide");
    await scrollTo(message);
    const context = page.context();
    const pagesBefore = context.pages().length;

    // Clicked: a dialog names the host and the whole address; nothing is opened yet.
    await message.getByRole("link", { name: "the setup guide" }).click();
    const dialog = page.getByRole("dialog", { name: "Open the agent's link?" });
    await dialog.waitFor();
    expect(await dialog.locator("code").textContent()).toBe(new URL(address).href);
    expect(await dialog.locator("strong").textContent()).toBe(new URL(address).host);
    expect(elsewhere.requests).toEqual([]);
    expect(context.pages()).toHaveLength(pagesBefore);

    // Cancelled: nothing opened.
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    // A middle click asks too.
    await message.getByRole("link", { name: "the setup guide" }).click({ button: "middle" });
    await dialog.waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    expect(elsewhere.requests).toEqual([]);
    expect(context.pages()).toHaveLength(pagesBefore);

    // From the keyboard (Enter on the link), then confirmed: the page opens, in a tab of its own.
    await message.getByRole("link", { name: "the setup guide" }).focus();
    await page.keyboard.press("Enter");
    const opened = context.waitForEvent("page");
    await dialog.getByRole("link", { name: `Open ${new URL(address).host}` }).click();
    const tab = await opened;
    await tab.waitForLoadState();
    expect(tab.url()).toBe(new URL(address).href);
    expect(elsewhere.requests).toEqual(["/docs/setup?step=2&from=agent"]);
    await dialog.waitFor({ state: "detached" });
    await tab.close();

    // A link that is not a web page is shown, never opened.
    const other = await exchange(page, "See [the notes](notes/plan.md).", "See the notes");
    await other.getByRole("link", { name: "the notes" }).click();
    await dialog.getByTestId("agent-link-refused").waitFor();
    expect(await dialog.getByTestId("agent-link-refused").textContent()).toContain("notes/plan.md");
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(context.pages()).toHaveLength(pagesBefore);
    expect(main.errors).toEqual([]);
  });
});
