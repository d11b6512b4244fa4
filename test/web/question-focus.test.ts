import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { build, type Rollup } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "./browser-harness.js";

/**
 * The dashboard's wait for a question's row, in a real browser on a page of its own: the module bundled alone, the
 * transcript's rows added by the test, so when a row appears (before or after the person types) is the test's to say.
 */
let launched: LaunchedBrowser;
let bundle: string;

beforeAll(async () => {
  const output = (await build({
    configFile: false,
    logLevel: "silent",
    build: {
      write: false,
      minify: false,
      lib: { entry: fileURLToPath(new URL("../../web/src/ui/question-focus.ts", import.meta.url)), formats: ["iife"], name: "questionFocus" },
    },
  })) as Rollup.RollupOutput[];
  bundle = (output[0]!.output[0] as Rollup.OutputChunk).code;
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.browser.close();
});

async function page(): Promise<Page> {
  const page = await (await launched.browser.newContext()).newPage();
  await page.setContent('<main><div class="transcript"></div><textarea aria-label="Message"></textarea></main>');
  await page.addScriptTag({ content: bundle });
  return page;
}

/** Adds the question's row to the transcript, as the conversation renders it. */
function render(page: Page, questionId: string): Promise<void> {
  return page.evaluate(`{
    const row = document.createElement("div");
    row.dataset.questionId = ${JSON.stringify(questionId)};
    row.tabIndex = -1;
    document.querySelector(".transcript").append(row);
  }`);
}

/** The focused row's question, else the focused element's tag. */
const focused = (page: Page) => page.evaluate<string>("document.activeElement.dataset.questionId ?? document.activeElement.tagName");

const show = (page: Page, ...questionIds: string[]) =>
  page.evaluate(questionIds.map((id) => `questionFocus.showInConversation(${JSON.stringify(id)});`).join("\n"));

describe("the focus on a question's row, once it is rendered", () => {
  it("goes to the row when it comes", async () => {
    const p = await page();
    await p.evaluate(() =>
      (globalThis as unknown as { questionFocus: { showInConversation(id: string): void } }).questionFocus.showInConversation("q1"),
    );
    await render(p, "q1");
    await expect.poll(() => focused(p)).toBe("q1");
    await p.context().close();
  });

  it("stays in the composer when the person types before the row comes", async () => {
    const p = await page();
    await p.evaluate(() =>
      (globalThis as unknown as { questionFocus: { showInConversation(id: string): void } }).questionFocus.showInConversation("q1"),
    );
    await p.getByRole("textbox", { name: "Message" }).click();
    await p.keyboard.type("hello");
    await render(p, "q1");
    // A later mutation is what the wait would act on: one more row, then the focus is looked at.
    await render(p, "q2");
    expect(await focused(p)).toBe("TEXTAREA");
    expect(await p.getByRole("textbox", { name: "Message" }).inputValue()).toBe("hello");
    await p.context().close();
  });

  it("follows the newest question asked for: an earlier one's row coming later takes no focus", async () => {
    const p = await page();
    await show(p, "q1", "q2");
    await render(p, "q2");
    await expect.poll(() => focused(p)).toBe("q2");
    await render(p, "q1");
    expect(await focused(p)).toBe("q2");
    await p.context().close();
  });
});
