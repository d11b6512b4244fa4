import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardSuite, desktop, openPage, screenshot, type OpenedPage } from "./dashboard-harness.js";

/**
 * What a message shows beyond its text: code blocks with their language and a copy button, task
 * lists as boxes that cannot be changed, a command's output keeping its columns, and a permission
 * asked once, in the conversation. The demo agent says back what it is sent, so a prompt is a way
 * to make an agent say any Markdown.
 */

const POLL = { timeout: 20_000, interval: 50 };

/** The page's window, as far as these tests use it (the tests are type-checked without the DOM library). */
interface View {
  getComputedStyle(element: unknown): { lineHeight: string };
  document: { activeElement: unknown };
}

const suite = dashboardSuite({ releaseGrace: "60s" });
let main: OpenedPage;

beforeAll(async () => {
  const { server, launched } = suite;
  const response = await fetch(`${server.url}/api/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json", origin: server.url },
    body: JSON.stringify({ cwd: server.workDir }),
  });
  const { id } = (await response.json()) as { id: string };
  // The copy button writes the clipboard; the test reads it back.
  main = await openPage(launched.browser, server.url, `/?token=${server.token}#/sessions/${id}`, {
    ...desktop,
    permissions: ["clipboard-read", "clipboard-write"],
  });
});

afterAll(async () => {
  expect(main?.errors ?? []).toEqual([]);
  await main?.close();
});

const transcript = (page: Page) => page.getByRole("log", { name: "Conversation" });

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByLabel("Message to the agent");
  await box.fill(text);
  await box.press("Enter");
}

/** Sends `text` and waits for the agent's reply containing `reply`, the turn over. */
async function exchange(page: Page, text: string, reply: string) {
  await send(page, text);
  const message = transcript(page).locator(".message.agent", { hasText: reply }).last();
  await message.waitFor();
  await expect.poll(() => page.getByRole("button", { name: "Cancel turn" }).isDisabled(), POLL).toBe(true);
  return message;
}

describe("a message's code, tasks and output", () => {
  it("a code block shows its language, and its button copies the code as written", async () => {
    const { page } = main;
    const code = 'const total = items.reduce((sum, item) => sum + item.price, 0);\nconsole.log("total", total);';
    const message = await exchange(page, `Here it is:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nand plain:\n\n\`\`\`\nno language\n\`\`\``, "Here it is");
    const blocks = message.locator(".code-block");
    await expect.poll(() => blocks.count(), POLL).toBe(2);
    expect(await blocks.first().locator(".code-lang").textContent()).toBe("ts");
    // A block with no language has no label, and still its button.
    expect(await blocks.nth(1).locator(".code-lang").count()).toBe(0);
    expect(await blocks.nth(1).getByRole("button", { name: "Copy the code" }).count()).toBe(1);

    const copy = blocks.first().getByRole("button", { name: "Copy the ts code" });
    await copy.click();
    await expect.poll(() => copy.textContent(), POLL).toBe("Copied");
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(code);
    await screenshot(page, "chat-messages-code");
  });

  it("a task list's items show boxes, ticked as the agent said, that cannot be changed; the agent's own boxes are not drawn", async () => {
    const { page } = main;
    const message = await exchange(
      page,
      'Progress:\n\n- [x] read the code\n- [ ] write the fix\n- plain item\n\n<input type="checkbox" checked> <span data-task="done"></span> posing as a task',
      "Progress",
    );
    const boxes = message.getByRole("checkbox");
    await expect.poll(() => boxes.count(), POLL).toBe(2);
    expect(
      await boxes.evaluateAll((inputs) =>
        inputs.map((input) => [(input as unknown as { checked: boolean }).checked, (input as unknown as { disabled: boolean }).disabled]),
      ),
    ).toEqual([
      [true, true],
      [false, true],
    ]);
    await boxes.nth(1).click({ force: true });
    expect(await boxes.nth(1).isChecked()).toBe(false);
    // Still sanitized: no id and no class but Berth's own and highlight.js's in the message.
    const marks = await message
      .locator("[id], [class]")
      .evaluateAll((elements) =>
        elements.map((element) => `${element.tagName.toLowerCase()}.${element.getAttribute("class") ?? ""}#${element.getAttribute("id") ?? ""}`),
      );
    expect(marks.filter((mark) => !/^(div\.md|li\.task|input\.task-box|span\.who)#$/.test(mark))).toEqual([]);

    // The session's line shows the end of the reply (on hover) as plain words, without Markdown's marks or the HTML.
    const preview = () =>
      page
        .getByRole("navigation", { name: /Sessions/ })
        .locator("li.session-row a")
        .getAttribute("title");
    await expect.poll(preview, POLL).toContain("posing as a task");
    expect(await preview()).toMatch(/read the code write the fix plain item\s+posing as a task$/);
  });

  it("a command's long line scrolls sideways instead of wrapping", async () => {
    const { page } = main;
    await send(page, "/run seq -s ' ' 1 400");
    const tool = transcript(page).getByRole("article", { name: /Tool call: seq/ });
    await expect.poll(() => tool.locator(".badge").textContent(), POLL).toBe("completed");
    const output = tool.locator("pre.output");
    expect(await output.textContent()).toContain("399 400");
    const size = await output.evaluate((element) => ({ scroll: element.scrollWidth, client: element.clientWidth, height: element.clientHeight }));
    expect(size.scroll).toBeGreaterThan(size.client);
    // One line of output, one line of text: not wrapped.
    const lineHeight = await output.evaluate((element) => Number.parseFloat((globalThis as unknown as View).getComputedStyle(element).lineHeight));
    expect(size.height).toBeLessThan(3 * lineHeight);
  });
});

describe("a permission asked", () => {
  it("shows once, in the conversation, where w finds it and it is answered", async () => {
    const { page } = main;
    await send(page, "/ask Deploy to production?");
    const row = transcript(page).getByRole("group", { name: "The agent asks for permission" });
    await row.waitFor();
    expect(await row.textContent()).toContain("Deploy to production?");
    // One pair of answers in the whole page, and the question's words once.
    expect(await page.getByRole("button", { name: "Allow", exact: true }).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Deny", exact: true }).count()).toBe(1);
    // What was asked, once (besides the prompt that asked for it, in the conversation and the session's preview).
    expect(await page.getByText("Deploy to production?", { exact: true }).count()).toBe(1);

    const focused = () => row.evaluate((element) => element === (globalThis as unknown as View).document.activeElement);
    // `w` (the question waiting longest) goes to it there too, not to the card.
    await page.evaluate("document.activeElement.blur()");
    await page.keyboard.press("w");
    await expect.poll(focused, POLL).toBe(true);
    await page.evaluate("document.activeElement.blur()");
    // No Questions panel beside the conversation, no strip pointing to it: the list's line says it waits.
    expect(await page.getByRole("region", { name: /Questions/ }).count()).toBe(0);
    expect(await page.getByRole("complementary", { name: "Waiting for you" }).count()).toBe(0);
    const chip = page.locator("li.session-row .chip");
    await expect.poll(() => chip.textContent(), POLL).toBe("waiting for you");
    await screenshot(page, "chat-messages-permission");

    await row.getByRole("button", { name: "Allow", exact: true }).click();
    await transcript(page).locator(".message.agent", { hasText: "You chose: allow" }).waitFor();
    await expect.poll(() => chip.textContent(), POLL).toBe("idle");
    await transcript(page).locator(".question-row.resolved", { hasText: "Deploy to production?" }).waitFor();
  });
});
