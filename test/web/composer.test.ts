import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { commandQuery, commandsOf, matchingCommands, withCommand } from "../../web/src/chat/slash-commands.js";
import { dashboardSuite, nextFrames, openPage, screenshot, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 30_000, interval: 50 };
const suite = dashboardSuite({ releaseGrace: "60s" });
let main: OpenedPage;
let sessionId: string;

afterAll(async () => {
  await main?.close();
});

const box = (page: Page) => page.getByLabel("Message to the agent");
const transcript = (page: Page) => page.getByRole("log", { name: "Conversation" });
const outbox = (page: Page) => page.getByRole("list", { name: "Messages not sent yet" });
const menu = (page: Page) => page.getByRole("listbox", { name: "The agent's commands" });
const focusedId = (page: Page) => page.evaluate("document.activeElement?.id ?? null");
const turnActive = () => suite.server.berth.host.getSession(sessionId)?.turnActive === true;

async function send(page: Page, text: string): Promise<void> {
  await box(page).fill(text);
  await box(page).press("Enter");
}

/** A `/sleep 1h` turn running, as the page sees it (Cancel turn enabled). */
async function longTurn(page: Page): Promise<void> {
  await send(page, "/sleep 1h");
  await expect.poll(turnActive, POLL).toBe(true);
  await expect.poll(() => page.getByRole("button", { name: "Cancel turn" }).isEnabled(), POLL).toBe(true);
}

describe("the agent's commands, as the prompt offers them", () => {
  const commands = commandsOf([
    { name: "sleep", description: "Wait", input: { hint: "<duration>" } },
    { name: "Search", description: "Find" },
    { name: "", description: "nameless" },
    { description: "no name" },
    "sleep",
    { name: "status", input: { hint: "" } },
  ]);

  it("reads the agent's list, leaving out malformed entries", () => {
    expect(commands).toEqual([
      { name: "sleep", description: "Wait", hint: "<duration>" },
      { name: "Search", description: "Find", hint: null },
      { name: "status", description: "", hint: null },
    ]);
    expect(commandsOf(undefined)).toEqual([]);
  });

  it("offers them while the command's name is typed, by prefix and in any case, and inserts the name and a space", () => {
    expect(commandQuery("/")).toBe("");
    expect(commandQuery("/S")).toBe("s");
    expect(commandQuery("/sleep ")).toBeNull();
    expect(commandQuery("hello /s")).toBeNull();
    expect(commandQuery("/a/b")).toBeNull();
    expect(matchingCommands(commands, "s").map((c) => c.name)).toEqual(["sleep", "Search", "status"]);
    expect(matchingCommands(commands, "se").map((c) => c.name)).toEqual(["Search"]);
    expect(matchingCommands(commands, "x")).toEqual([]);
    expect(withCommand(commands[0]!)).toBe("/sleep ");
  });
});

describe("the composer, in a real browser", () => {
  it("has the focus once Start session opened the chat, and when a chat is opened from the list", async () => {
    main = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions`);
    const { page } = main;
    await page.getByRole("banner").getByRole("button", { name: "New session" }).click();
    const dialog = page.getByRole("dialog", { name: "New session" });
    await dialog.getByLabel("Directory").fill(suite.server.workDir);
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL(/#\/sessions\//);
    sessionId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
    await dialog.waitFor({ state: "detached" });
    await expect.poll(() => focusedId(page), { ...POLL, message: "focus after Start session" }).toBe("prompt-text");

    await page.getByRole("button", { name: "Close", exact: true }).click();
    await page.locator(`li.session-row[data-session-id="${sessionId}"]`).getByRole("link").click();
    await page.getByRole("button", { name: "Resume" }).waitFor();
    await expect.poll(() => focusedId(page), { ...POLL, message: "focus after opening from the list" }).toBe("prompt-text");
  });

  it("sends with Enter and starts a new line with Shift+Enter", async () => {
    const { page } = main;
    await box(page).fill("first line");
    await box(page).press("Shift+Enter");
    await box(page).pressSequentially("second line");
    expect(await box(page).inputValue()).toBe("first line\nsecond line");
    await box(page).press("Enter");
    await transcript(page).locator(".message.user", { hasText: "second line" }).waitFor();
    await transcript(page).locator(".message.agent", { hasText: "second line" }).waitFor();
    expect(await box(page).inputValue()).toBe("");
  });

  it("asks before Escape in the prompt box cancels the running turn", async () => {
    const { page } = main;
    await longTurn(page);
    await box(page).press("Escape");
    const confirm = page.getByRole("dialog", { name: "Cancel the running turn?" });
    await confirm.waitFor();
    await confirm.getByRole("button", { name: "Keep it" }).click();
    await confirm.waitFor({ state: "detached" });
    // Kept: the turn goes on, and typing goes on where it was.
    expect(turnActive()).toBe(true);
    await expect.poll(() => focusedId(page), POLL).toBe("prompt-text");

    // In the search box Escape clears the search; it offers nothing about the turn.
    const search = page.getByRole("searchbox", { name: "Search session titles" });
    await search.fill("no such title");
    await search.press("Escape");
    await expect.poll(() => search.inputValue(), POLL).toBe("");
    await nextFrames(page);
    expect(await page.locator("dialog[open]").count()).toBe(0);

    // Kept, and Escape again before the next frame: the new question stays (the closed one's close event, which
    // Chromium dispatches at the next animation frame, must not take it down).
    await box(page).press("Escape");
    await confirm.waitFor();
    // The dashboard renders on a microtask: once those ran, the dialog is gone, and this is still the same task.
    await page.evaluate(`(async () => {
      [...document.querySelectorAll("dialog[open] button")].find((button) => button.textContent.trim() === "Keep it").click();
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => queueMicrotask(resolve));
      const key = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
      document.getElementById("prompt-text").dispatchEvent(key);
    })()`);
    await confirm.waitFor();
    await nextFrames(page);
    expect(await page.locator("dialog[open]").count()).toBe(1);

    await confirm.getByRole("button", { name: "Cancel turn" }).click();
    await transcript(page).locator(".stop", { hasText: "Turn ended: cancelled" }).last().waitFor();
    await expect.poll(turnActive, POLL).toBe(false);
  });

  it("shows queued messages, which can be edited (held meanwhile) or removed before they go", async () => {
    const { page } = main;
    await longTurn(page);
    await send(page, "first draft");
    await send(page, "to be removed");
    const queued = outbox(page).locator(".outgoing.queued, .outgoing.editing");
    await expect.poll(() => queued.count(), POLL).toBe(2);
    await outbox(page).getByText("Queued: sends when the turn ends").first().waitFor();

    await queued.filter({ hasText: "to be removed" }).getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => queued.count(), POLL).toBe(1);
    // The focus does not fall to the page with the removed message's button: the message box has it.
    await expect.poll(() => focusedId(page), POLL).toBe("prompt-text");
    // An edit given up: the field is gone, the message box has the focus.
    await queued.filter({ hasText: "first draft" }).getByRole("button", { name: "Edit" }).click();
    await outbox(page).getByLabel("Editing: held until saved").press("Escape");
    await expect.poll(() => focusedId(page), POLL).toBe("prompt-text");

    await queued.filter({ hasText: "first draft" }).getByRole("button", { name: "Edit" }).click();
    const edited = outbox(page).getByLabel("Editing: held until saved");
    await expect.poll(() => edited.evaluate((field) => field === field.ownerDocument.activeElement), POLL).toBe(true);
    await edited.fill("second draft");
    // The turn ends while the message is being edited: it stays held until saved.
    await page.getByRole("button", { name: "Cancel turn" }).click();
    await expect.poll(turnActive, POLL).toBe(false);
    await transcript(page).locator(".stop", { hasText: "Turn ended: cancelled" }).nth(1).waitFor();
    expect(await edited.inputValue()).toBe("second draft");
    await screenshot(page, "composer-editing-queued");
    await edited.press("Enter");
    await expect.poll(() => focusedId(page), POLL).toBe("prompt-text");

    await transcript(page).locator(".message.agent", { hasText: "second draft" }).waitFor();
    await outbox(page).waitFor({ state: "detached" });
    for (const never of ["first draft", "to be removed"]) {
      expect(await transcript(page).locator(".message", { hasText: never }).count()).toBe(0);
    }
  });

  it("sends a queued message after its turn though the person left the conversation, and keeps what they were typing", async () => {
    const { page } = main;
    const { host } = suite.server.berth;
    await longTurn(page);
    await send(page, "sent from behind");
    await outbox(page).getByText("Queued: sends when the turn ends").waitFor();
    await box(page).fill("half a thought");
    await page.evaluate(`location.hash = "#/sessions"`);
    await box(page).waitFor({ state: "detached" });
    // The turn ends while the person is elsewhere: the chat left behind sends the message.
    await host.cancel(sessionId);
    const promptedFromBehind = () =>
      host.events(sessionId).filter((event) => event.kind === "turn_started" && JSON.stringify(event.payload).includes("sent from behind"));
    await expect.poll(() => promptedFromBehind().length, POLL).toBe(1);
    // Once it went, the chat left behind lets the session go.
    await expect.poll(() => host.getSession(sessionId)!.holders, POLL).toBe(0);
    await page.evaluate(`location.hash = "#/sessions/${sessionId}"`);
    await transcript(page).locator(".message.agent", { hasText: "sent from behind" }).waitFor();
    expect(await box(page).inputValue()).toBe("half a thought");
    await page.reload();
    await box(page).waitFor();
    expect(await box(page).inputValue()).toBe("half a thought");
    await box(page).fill("");
    expect(promptedFromBehind()).toHaveLength(1);
  });

  it("offers the agent's commands on /, with their hints and descriptions, chosen with the keyboard", async () => {
    const { page } = main;
    await box(page).fill("/");
    await menu(page).waitFor();
    const sleep = menu(page).getByRole("option", { name: /^\/sleep/ });
    await sleep.getByText("<duration>", { exact: false }).waitFor();
    await sleep.getByText("Wait, honouring session/cancel", { exact: false }).waitFor();
    await screenshot(page, "composer-command-menu");

    // Narrowed as the name is typed; Down and Up move (and wrap), Enter inserts.
    await box(page).pressSequentially("e");
    await expect.poll(() => menu(page).getByRole("option").allTextContents(), POLL).toHaveLength(5);
    const selected = () => menu(page).locator('[aria-selected="true"] .command-name').textContent();
    expect(await selected()).toBe("/elicit");
    await box(page).press("ArrowDown");
    expect(await selected()).toBe("/edit");
    await box(page).press("ArrowUp");
    await box(page).press("ArrowUp");
    expect(await selected()).toBe("/extnotify");
    await box(page).press("Enter");
    expect(await box(page).inputValue()).toBe("/extnotify ");
    await menu(page).waitFor({ state: "detached" });

    // Escape closes the menu only (no dialog, nothing cancelled), and Tab inserts too.
    await box(page).fill("/sl");
    await menu(page).waitFor();
    await box(page).press("Escape");
    await menu(page).waitFor({ state: "detached" });
    expect(await page.locator("dialog[open]").count()).toBe(0);
    await box(page).pressSequentially("e");
    await menu(page).waitFor();
    await box(page).press("Tab");
    expect(await box(page).inputValue()).toBe("/sleep ");
    await expect.poll(() => focusedId(page), POLL).toBe("prompt-text");

    // The inserted command works.
    await box(page).pressSequentially("10ms");
    await box(page).press("Enter");
    await transcript(page).locator(".message.user", { hasText: "/sleep 10ms" }).waitFor();
    await transcript(page).locator(".message.agent", { hasText: "Slept" }).last().waitFor();

    // A command typed in full is sent by Enter, list open or not.
    await box(page).fill("/whoami");
    await menu(page).waitFor();
    await box(page).press("Enter");
    await transcript(page).locator(".message.user", { hasText: "/whoami" }).waitFor();
    expect(await box(page).inputValue()).toBe("");
    expect(main.errors).toEqual([]);
  });
});
