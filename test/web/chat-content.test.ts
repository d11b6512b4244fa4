import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import {
  desktop,
  launchBrowser,
  nextFrames,
  openPage,
  phone,
  screenshot,
  scrollTo,
  startDashboardServer,
  waitUntilGone,
  type DashboardServer,
  type LaunchedBrowser,
  type OpenedPage,
} from "./dashboard-harness.js";

const POLL = { timeout: 20_000, interval: 50 };

/** The page's window, as far as these tests use it (the tests are type-checked without the DOM library). */
interface View {
  getComputedStyle(element: unknown): { backgroundColor: string };
}

let server: DashboardServer;
let launched: LaunchedBrowser;
let main: OpenedPage;
let sessionId: string;

beforeAll(async () => {
  server = await startDashboardServer({ releaseGrace: "60s" });
  launched = await launchBrowser();
  // A session made over REST: opening it reads it; the first message starts its agent.
  const response = await fetch(`${server.url}/api/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json", origin: server.url },
    body: JSON.stringify({ cwd: server.workDir }),
  });
  sessionId = ((await response.json()) as { id: string }).id;
});

afterAll(async () => {
  await main?.close();
  const browserPids = launched ? await launched.pids().catch(() => []) : [];
  await launched?.browser.close();
  await server?.close();
  expect(await waitUntilGone([...(server?.childPids() ?? []), ...browserPids])).toEqual([]);
});

const transcript = (page: Page) => page.getByRole("log", { name: "Conversation" });

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByLabel("Message to the agent");
  await box.fill(text);
  await box.press("Enter");
}

/** Sends and waits until the agent's answer (containing `reply`) is in the transcript, the turn over. */
async function exchange(page: Page, text: string, reply: string): Promise<void> {
  await send(page, text);
  await transcript(page).locator(".message.agent", { hasText: reply }).last().waitFor();
  await expect.poll(() => page.getByRole("button", { name: "Cancel turn" }).isDisabled(), POLL).toBe(true);
}

const markdown = [
  "## Build report",
  "",
  "All **42 tests** passed; see `npm test`.",
  "",
  "| suite | result |",
  "| --- | --- |",
  "| unit | ok |",
  "",
  "- first",
  "- second",
  "",
  "```ts",
  "const answer: number = 42;",
  "```",
].join("\n");

describe("the conversation's content in a real browser", () => {
  it("builds a conversation long enough to scroll, with Markdown, a diff, a tool call, a plan, a thought, a question", async () => {
    main = await openPage(launched.browser, server.url, `/?token=${server.token}#/sessions/${sessionId}`, {
      ...desktop,
      viewport: { width: 1366, height: 760 },
    });
    const { page } = main;
    for (let i = 1; i <= 12; i++) await exchange(page, `Message number ${i}: ${"lorem ipsum ".repeat(12)}`, `Message number ${i}:`);
    await exchange(page, markdown, "Build report");
    writeFileSync(join(server.workDir, "notes.txt"), "alpha\nbeta\ngamma\n");
    await exchange(page, `/edit ${join(server.workDir, "notes.txt")} alpha\nBETA\ngamma\ndelta`, "Edited");
    await exchange(page, "/plan Read the code; Write the fix; Run the tests", "Done: 3 steps");
    await exchange(page, "/think The cache must be warmed before the benchmark", "Thought it through");
    await send(page, "/ask Push the release tag v1.4.0?");
    const ask = transcript(page).getByRole("group").filter({ hasText: "Push the release tag v1.4.0?" });
    await ask.getByRole("button", { name: "Allow" }).click();
    await transcript(page).locator(".message.agent", { hasText: "You chose: allow" }).waitFor();
    await send(page, "/run printf 'compiling...\\nall 42 tests passed\\n'");
    await transcript(page)
      .getByRole("article", { name: /Tool call: printf/ })
      .locator(".badge", { hasText: "completed" })
      .waitFor();
    // Long enough to scroll.
    expect(await transcript(page).evaluate((element) => element.scrollHeight > 3 * element.clientHeight)).toBe(true);
    expect(main.errors).toEqual([]);
  });

  it("keeps a tool call card its size, its output visible, in a conversation that scrolls", async () => {
    const { page } = main;
    const tool = transcript(page).getByRole("article", { name: /Tool call: printf/ });
    await tool.waitFor();
    const box = await tool.boundingBox();
    expect(box!.height).toBeGreaterThan(60);
    const output = tool.locator(".output");
    await expect.poll(() => output.textContent(), POLL).toContain("all 42 tests passed");
    expect(await output.isVisible()).toBe(true);
    expect((await output.boundingBox())!.height).toBeGreaterThan(30);
  });

  it("renders the agent's Markdown: headings, bold, tables, lists and highlighted code", async () => {
    const { page } = main;
    const message = transcript(page).locator(".message.agent", { hasText: "Build report" });
    await scrollTo(message);
    expect(await message.locator("h2").textContent()).toBe("Build report");
    expect(await message.locator("strong").textContent()).toBe("42 tests");
    expect(await message.locator("table td").allTextContents()).toEqual(["unit", "ok"]);
    expect(await message.locator("ul > li").count()).toBe(2);
    // The highlighter is loaded on demand, then the block is shown again highlighted.
    await expect.poll(() => message.locator("pre .hljs-keyword").count(), POLL).toBeGreaterThan(0);
  });

  it("shows a diff line by line, coloured, with the file's name", async () => {
    const { page } = main;
    const diff = transcript(page).locator("figure.diff");
    await scrollTo(diff);
    expect(await diff.locator(".path").textContent()).toBe(join(server.workDir, "notes.txt"));
    expect(await diff.locator(".diff-line.del .code").allTextContents()).toEqual(["-beta"]);
    expect(await diff.locator(".diff-line.add .code").allTextContents()).toEqual(["+BETA", "+delta"]);
    const background = (selector: string) =>
      diff
        .locator(selector)
        .first()
        .evaluate((element) => (element.ownerDocument.defaultView as unknown as View).getComputedStyle(element).backgroundColor);
    expect(await background(".diff-line.add")).not.toBe(await background(".diff-line.del"));
    expect(await background(".diff-line.add")).not.toBe(await background(".diff-line.context"));
  });

  it("keeps plans, thoughts, questions with their answers and turn ends when the session is opened again", async () => {
    const { page } = main;
    await send(page, "/sleep 1h");
    await expect.poll(() => page.getByRole("button", { name: "Cancel turn" }).isEnabled(), POLL).toBe(true);
    await page.getByRole("button", { name: "Cancel turn" }).click();
    await transcript(page).locator(".stop", { hasText: "Turn ended: cancelled" }).waitFor();
    await page.reload();
    await scrollTo(transcript(page).locator(".plan", { hasText: "Run the tests" }));
    expect(await transcript(page).locator(".plan .badge.ok").count()).toBe(3);
    await scrollTo(transcript(page).locator(".message.thought", { hasText: "The cache must be warmed" }));
    const answered = transcript(page).locator(".question-row.resolved", { hasText: "Push the release tag v1.4.0?" });
    await scrollTo(answered);
    expect(await answered.locator(".answer").textContent()).toBe("You allowed: Allow");
    await scrollTo(transcript(page).locator(".stop", { hasText: "Turn ended: cancelled" }));
    expect(main.errors).toEqual([]);
  });

  it("runs nothing that agent text carries: script tags, javascript: links, event attributes", async () => {
    const { page } = main;
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    // (The page's CSP would block inline handlers too, and reports each one DOMPurify's inert parse meets: the
    // proof that the sanitizer removed them is the DOM below, with no handler and no javascript: URL left.)
    const payload = [
      "Hostile: <script>window.__xss = 'script'; alert('script')</script>",
      "",
      "[click me](javascript:window.__xss='link';alert('link'))",
      "",
      "<img src=x onerror=\"window.__xss='img';alert('img')\">",
      "",
      '<a href="#" onclick="window.__xss=\'onclick\'">plain anchor</a> <b onmouseover="window.__xss=\'hover\'">bold</b>',
      "",
      '<svg onload="window.__xss=\'svg\'"><circle r="4"/></svg> <iframe src="javascript:window.__xss=\'iframe\'"></iframe>',
      "",
      '<form action="https://example.invalid"><button>Send</button></form>',
    ].join("\n");
    await exchange(page, payload, "Hostile:");
    const message = transcript(page).locator(".message.agent", { hasText: "Hostile:" }).last();
    expect(await message.locator("script, iframe, form, button, svg[onload]").count()).toBe(0);
    const attributes = await message.evaluate((element) =>
      [...element.querySelectorAll("*")].flatMap((node) =>
        [...node.attributes].filter((a) => a.name.startsWith("on") || /^\s*javascript:/i.test(a.value)).map((a) => `${node.tagName} ${a.name}`),
      ),
    );
    expect(attributes).toEqual([]);
    // Clicking, hovering: still nothing runs.
    await message.getByText("click me").click();
    await message.getByText("plain anchor").click();
    // A link is followed only through Berth's confirm step, and this one is not a web page.
    const confirm = page.getByRole("dialog", { name: "Open the agent's link?" });
    await confirm.getByTestId("agent-link-refused").waitFor();
    await page.keyboard.press("Escape");
    await confirm.waitFor({ state: "detached" });
    await message.getByText("bold").hover();
    await nextFrames(page);
    expect(await page.evaluate("typeof window.__xss")).toBe("undefined");
    expect(dialogs).toEqual([]);
    // Links agent text does carry open in a new tab and tell the target nothing.
    const link = message.getByText("plain anchor");
    expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await link.getAttribute("target")).toBe("_blank");
    expect(main.errors).toEqual([]);
  });

  for (const scheme of ["light", "dark"] as const) {
    for (const [width, options] of [
      ["desktop", desktop],
      ["phone", phone],
    ] as const) {
      it(`looks right: ${width}, ${scheme}`, async () => {
        const opened = await openPage(launched.browser, server.url, `/?token=${server.token}#/sessions/${sessionId}`, {
          ...options,
          colorScheme: scheme,
        });
        const { page } = opened;
        // Held, as after a message: the look of a chat in use.
        await page.getByRole("button", { name: "Resume" }).click();
        await page.getByRole("button", { name: "Resume" }).waitFor({ state: "detached" });
        const diff = transcript(page).locator("figure.diff");
        await scrollTo(diff);
        // The diff and the Markdown above it in view.
        await diff.evaluate((element) => element.scrollIntoView({ block: "end" }));
        await nextFrames(page);
        expect(await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")).toBe(0);
        await page.evaluate("document.activeElement.blur()");
        await screenshot(page, `conversation-${width}-${scheme}`);
        expect(opened.errors).toEqual([]);
        await opened.close();
      });
    }
  }
});
