import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { floodChunk } from "../../src/agents/demo-agent/commands/flood.js";
import { dashboardSuite, nextFrames, openPage, screenshot, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 30_000, interval: 50 };

const suite = dashboardSuite();
let opened: OpenedPage | undefined;

afterEach(async ({ task }) => {
  if (task.result?.state === "fail" && opened && !opened.page.isClosed())
    await screenshot(opened.page, `failed-reading-${task.name.replace(/\W+/g, "-").slice(0, 50)}`);
  await opened?.close();
  opened = undefined;
});

const transcript = (page: Page) => page.getByRole("log", { name: "Conversation" });

async function sessionView(sessionId: string): Promise<{ state: string; holders: number; turnActive: boolean }> {
  const { url, token } = suite.server;
  const response = await fetch(`${url}/api/sessions/${sessionId}`, { headers: { authorization: `Bearer ${token}` } });
  return (await response.json()) as { state: string; holders: number; turnActive: boolean };
}

/** The agent's text as the page shows it, every row of the (virtualized) transcript read from its top to its end. */
async function agentTextShown(page: Page): Promise<string> {
  const log = transcript(page);
  await log.hover();
  await page.mouse.wheel(0, -400);
  const rows = new Map<number, string>();
  for (let top = 0; ; ) {
    await log.evaluate((element, to) => {
      element.scrollTop = to;
    }, top);
    await nextFrames(page);
    const seen = await log.evaluate((element) =>
      [...element.querySelectorAll<HTMLElement>(".row[data-index]")].map((row) => ({
        index: Number(row.dataset.index),
        // Markdown puts line breaks between paragraphs; the flood's text has no white space of its own.
        text: [...row.querySelectorAll(".message.agent .md")].map((md) => (md.textContent ?? "").replace(/\s/g, "")).join(""),
      })),
    );
    for (const { index, text } of seen) rows.set(index, text);
    const { scrollTop, clientHeight, scrollHeight } = await log.evaluate((element) => ({
      scrollTop: element.scrollTop,
      clientHeight: element.clientHeight,
      scrollHeight: element.scrollHeight,
    }));
    if (scrollTop + clientHeight >= scrollHeight - 1) break;
    top = scrollTop + clientHeight * 0.8;
  }
  return [...rows.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, text]) => text)
    .join("");
}

describe("a page that only reads a session", () => {
  it("shows a long reply read from the journal whole, without holding the session", async () => {
    const { berth, url, token, workDir } = suite.server;
    const sessionId = (await berth.host.createSession({ cwd: workDir })).id;
    const chunks = 20_000;
    expect((await berth.host.prompt(sessionId, [{ type: "text", text: `/flood ${chunks} 16` }])).stopReason).toBe("end_turn");
    const expected = Array.from({ length: chunks }, (_, i) => floodChunk(i, 16)).join("");

    opened = await openPage(suite.launched.browser, url, `/?token=${token}#/sessions/${sessionId}`);
    const { page } = opened;
    await transcript(page).locator(`[data-chars="${expected.length}"]`).waitFor({ timeout: POLL.timeout });
    await page.getByRole("button", { name: "Resume" }).waitFor();
    const shown = await agentTextShown(page);
    // Where the text first differs, rather than a diff of half a megabyte.
    const firstDifference = [...expected].findIndex((char, i) => shown[i] !== char);
    expect({ length: shown.length, firstDifference }).toEqual({ length: expected.length, firstDifference: -1 });
    expect((await sessionView(sessionId)).holders).toBe(0);
    expect(opened.errors).toEqual([]);
  });
});
