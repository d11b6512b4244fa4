import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import type { Page, Route } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { floodChunk } from "../../src/agents/demo-agent/commands/flood.js";
import { connectAcpClient, dashboardSuite, nextFrames, openPage, screenshot, type OpenedPage } from "./dashboard-harness.js";

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

/** A new session opened in the page, which only reads it (nothing holds it until the person sends or resumes). */
async function readNewSession(): Promise<{ sessionId: string; page: Page }> {
  const { berth, url, token, workDir } = suite.server;
  const sessionId = (await berth.host.createSession({ cwd: workDir })).id;
  opened = await openPage(suite.launched.browser, url, `/?token=${token}#/sessions/${sessionId}`);
  await opened.page.getByRole("button", { name: "Resume" }).waitFor();
  return { sessionId, page: opened.page };
}

/** Another client (here the host's own API) runs `/run <command>`; resolves once the reading page shows `firstLine` of its output. */
async function runWhileReading(page: Page, sessionId: string, command: string, firstLine: string) {
  const turn = suite.server.berth.host.prompt(sessionId, [{ type: "text", text: `/run ${command}` }]);
  const card = transcript(page).getByRole("article", { name: /^Tool call: / });
  const output = card.locator("pre.output");
  await expect.poll(() => output.textContent(), POLL).toContain(firstLine);
  return { turn, card, output };
}

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
      [...element.querySelectorAll(".row[data-index]")].map((row) => ({
        index: Number(row.getAttribute("data-index")),
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

describe("a page that holds a session", () => {
  it("shows each streamed chunk once and in order when live updates overlap a journal read", async () => {
    const { sessionId, page } = await readNewSession();
    await page.getByRole("button", { name: "Resume" }).click();
    await expect.poll(async () => (await sessionView(sessionId)).holders, POLL).toBe(1);

    // The page's journal reads are answered, but the answers held back: the live updates of two turns arrive meanwhile,
    // the first turn's also in the answer (read after it), the second's only live (it runs after the answer was read).
    const held: Route[] = [];
    let holding = true;
    await page.route(/\/api\/sessions\/[^/]+\/events/, (route) => (holding ? void held.push(route) : route.continue()));
    const flood = (count: number) => suite.server.berth.host.prompt(sessionId, [{ type: "text", text: `/flood ${count} 16` }]);
    expect((await flood(300)).stopReason).toBe("end_turn");
    // The session's change (its updated time) makes the page read its journal.
    await expect.poll(() => held.length, POLL).toBeGreaterThan(0);
    const answers = await Promise.all(held.map(async (route) => ({ route, response: await route.fetch() })));
    expect((await flood(400)).stopReason).toBe("end_turn");
    holding = false;
    for (const { route, response } of answers) await route.fulfill({ response });

    const expected = [300, 400].map((count) => Array.from({ length: count }, (_, i) => floodChunk(i, 16)).join("")).join("");
    await transcript(page)
      .locator(`[data-chars="${400 * 16}"]`)
      .waitFor({ timeout: POLL.timeout });
    const shown = await agentTextShown(page);
    // Where the text first differs, rather than a diff of 11 kB.
    const firstDifference = [...expected].findIndex((char, i) => shown[i] !== char);
    expect({ length: shown.length, firstDifference }).toEqual({ length: expected.length, firstDifference: -1 });
    expect(opened?.errors).toEqual([]);
  });
});

describe("a page that only reads a session", () => {
  it("shows a long reply read from the journal whole, without holding the session", async () => {
    const { berth, url, token, workDir } = suite.server;
    const sessionId = (await berth.host.createSession({ cwd: workDir })).id;
    const chunks = 10_000;
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
    expect(opened?.errors).toEqual([]);
  });

  it("shows a running command's output growing, while another client's turn runs it, without holding the session", async () => {
    const { workDir } = suite.server;
    const { sessionId, page } = await readNewSession();

    // Another client (here the host's own API) runs a command that prints a line, then waits for a file before each next step.
    const command = "echo first-line; while [ ! -f step-2 ]; do sleep 0.05; done; echo second-line; while [ ! -f step-3 ]; do sleep 0.05; done";
    const { turn, card, output } = await runWhileReading(page, sessionId, command, "first-line");
    expect(await card.locator(".badge", { hasText: "in progress" }).count()).toBe(1);
    expect(await output.getAttribute("class")).toContain("live");

    writeFileSync(join(workDir, "step-2"), "");
    // The command has not exited (it waits for step-3): what shows is its output as it grows, not the agent's final update.
    await expect.poll(() => output.textContent(), POLL).toContain("second-line");
    expect(await card.locator(".badge", { hasText: "in progress" }).count()).toBe(1);
    expect((await sessionView(sessionId)).holders).toBe(0);

    writeFileSync(join(workDir, "step-3"), "");
    expect((await turn).stopReason).toBe("end_turn");
    await card.locator(".badge", { hasText: "completed" }).waitFor({ timeout: POLL.timeout });
    await expect.poll(() => output.textContent(), POLL).toBe("first-line\nsecond-line\n");
    expect(await page.getByRole("button", { name: "Resume" }).count()).toBe(1);
    expect(opened?.errors).toEqual([]);
  });

  it("reads a command's last lines and exit once its tool call ended, from an agent that keeps the terminal in it", async () => {
    const { workDir } = suite.server;
    const { sessionId, page } = await readNewSession();
    const command = "echo first-line; while [ ! -f keep-2 ]; do sleep 0.05; done; echo last-line";
    const { turn, card, output } = await runWhileReading(page, sessionId, `--keep-terminal ${command}`, "first-line");

    // The page's reads of the terminal are held until the tool call shows it ended: whatever it read last, the command was running.
    const held: Route[] = [];
    let holding = true;
    await page.route(/\/terminals\//, (route) => (holding ? void held.push(route) : route.continue()));
    writeFileSync(join(workDir, "keep-2"), "");
    expect((await turn).stopReason).toBe("end_turn");
    await card.locator(".badge", { hasText: "completed" }).waitFor({ timeout: POLL.timeout });
    holding = false;
    for (const route of held) await route.continue();
    await expect.poll(() => output.textContent(), POLL).toBe("first-line\nlast-line\n\n(exit code 0)");
    expect(opened?.errors).toEqual([]);
  });

  it("keeps following a command's output after Resume, for a tool call that started while the page only read", async () => {
    const { workDir } = suite.server;
    const { sessionId, page } = await readNewSession();
    const command = "echo while-read; while [ ! -f held-go ]; do sleep 0.05; done; echo while-held; while [ ! -f held-end ]; do sleep 0.05; done";
    const { turn, card, output } = await runWhileReading(page, sessionId, command, "while-read");

    await page.getByRole("button", { name: "Resume" }).click();
    await expect.poll(async () => (await sessionView(sessionId)).holders, POLL).toBe(1);
    writeFileSync(join(workDir, "held-go"), "");
    // Held now, the page still reads what the command prints.
    await expect.poll(() => output.textContent(), POLL).toContain("while-held");
    expect(await card.locator(".badge", { hasText: "in progress" }).count()).toBe(1);

    writeFileSync(join(workDir, "held-end"), "");
    expect((await turn).stopReason).toBe("end_turn");
    await card.locator(".badge", { hasText: "completed" }).waitFor({ timeout: POLL.timeout });
    expect(opened?.errors).toEqual([]);
  });

  it("keeps following a command's output through a network loss, once the page reaches Berth again", async () => {
    const { workDir } = suite.server;
    const { sessionId, page } = await readNewSession();
    const command = "echo before-loss; while [ ! -f net-2 ]; do sleep 0.05; done; echo during-loss; while [ ! -f net-3 ]; do sleep 0.05; done";
    const { turn, card, output } = await runWhileReading(page, sessionId, command, "before-loss");

    // The page's network goes away (its reads of the journal, the terminal and the overview all fail) while the command prints.
    await page.context().setOffline(true);
    const lost = page.getByRole("status").filter({ hasText: "Berth cannot be reached" });
    await lost.waitFor({ timeout: POLL.timeout });
    writeFileSync(join(workDir, "net-2"), "");
    // Back: the page reconnects at once ("online"), and the command's output it missed meanwhile shows, still read, not held.
    await page.context().setOffline(false);
    await lost.waitFor({ state: "detached", timeout: POLL.timeout });
    await expect.poll(() => output.textContent(), POLL).toContain("during-loss");
    expect(await card.locator(".badge", { hasText: "in progress" }).count()).toBe(1);
    expect((await sessionView(sessionId)).holders).toBe(0);

    writeFileSync(join(workDir, "net-3"), "");
    expect((await turn).stopReason).toBe("end_turn");
    await card.locator(".badge", { hasText: "completed" }).waitFor({ timeout: POLL.timeout });
    expect(opened?.errors).toEqual([]);
  });

  it("shows the agent's mode as another client changes it, still only reading", async () => {
    const { url, token, workDir } = suite.server;
    // An editor (a Node ACP client) holds the session and changes its mode.
    const editor = await connectAcpClient(suite.server);
    try {
      const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
      opened = await openPage(suite.launched.browser, url, `/?token=${token}#/sessions/${sessionId}`);
      const { page } = opened;
      const mode = page.getByRole("group", { name: "The agent's settings for this session" }).getByLabel("Mode", { exact: true });
      await expect.poll(() => mode.inputValue().catch(() => null), POLL).toBe("ask");
      await page.getByRole("button", { name: "Resume" }).waitFor();

      await editor.agent.request(methods.agent.session.setMode, { sessionId, modeId: "code" });
      await expect.poll(() => mode.inputValue(), POLL).toBe("code");
      await editor.agent.request(methods.agent.session.setMode, { sessionId, modeId: "ask" });
      await expect.poll(() => mode.inputValue(), POLL).toBe("ask");
      // The page read it; the editor alone holds the session.
      expect(await page.getByRole("button", { name: "Resume" }).count()).toBe(1);
      expect((await sessionView(sessionId)).holders).toBe(1);
      expect(opened.errors).toEqual([]);
    } finally {
      editor.close();
    }
  });
});
