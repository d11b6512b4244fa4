import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import type { SessionView } from "../../src/host/views.js";
import { waitUntil } from "../support/process-table.js";
import { isFiltering, matchesFilter, noFilter } from "../../web/src/ui/session-filter.js";
import { neighbour, shortcutOf } from "../../web/src/ui/shortcuts.js";
import { dashboardSuite, type HeldRequests, holdRequests, nextFrames, openPage, phone, screenshot, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 15_000, interval: 50 };

const helperState = mkdtempSync(join(tmpdir(), "berth-find-helper-state-"));
// Registered before the suite's own, so it runs after the host has stopped (after hooks run in reverse).
afterAll(() => rmSync(helperState, { recursive: true, force: true }));
const suite = dashboardSuite({ agents: { helper: { command: process.execPath, args: [demoAgentMain, "--state-dir", helperState] } } });
let main: OpenedPage;
const ids: Record<"login" | "docs" | "asking", string> = { login: "", docs: "", asking: "" };
let otherFolder: string;

beforeAll(async () => {
  const { server } = suite;
  otherFolder = join(server.workDir, "docs-site");
  mkdirSync(otherFolder);
  const host = server.berth.host;
  const login = await host.createSession({ cwd: server.workDir });
  await host.prompt(login.id, [{ type: "text", text: "Fix the login bug" }]);
  const docs = await host.createSession({ cwd: otherFolder, agent: "helper" });
  await host.prompt(docs.id, [{ type: "text", text: "Write the café docs" }]);
  const asking = await host.createSession({ cwd: server.workDir });
  void host.prompt(asking.id, [{ type: "text", text: "/ask Deploy the login page?" }]);
  await waitUntil(() => host.pendingQuestions(asking.id).length === 1, "the question is pending");
  Object.assign(ids, { login: login.id, docs: docs.id, asking: asking.id });
});

afterAll(async () => {
  // Before the suite stops the host: a question left waiting would hold its turn open.
  const host = suite.server?.berth.host;
  for (const question of host?.pendingQuestions() ?? []) await host!.answerQuestion(question.id, { optionId: "allow" });
});

afterEach(async ({ task }) => {
  if (task.result?.state === "fail" && main && !main.page.isClosed())
    await screenshot(main.page, `failed-find-${task.name.replace(/\W+/g, "-").slice(0, 50)}`);
});

async function waitFor(condition: () => boolean): Promise<void> {
  await expect.poll(condition, POLL).toBe(true);
}

const cards = (page: Page) => page.locator("li.session-row");
const shownIds = (page: Page) => cards(page).evaluateAll((items) => items.map((item) => item.getAttribute("data-session-id")));
const card = (page: Page, id: string) => page.locator(`li.session-row[data-session-id="${id}"]`);
const hashOf = (page: Page) => decodeURIComponent(new URL(page.url()).hash);

describe("finding sessions: the pure parts", () => {
  const session = (change: Partial<SessionView>): SessionView =>
    ({
      id: "a1b2c3d4-0000",
      agent: "demo",
      cwd: "/w",
      workspace: null,
      title: "Fix the Login bug",
      state: "live",
      pendingQuestions: 0,
      ...change,
    }) as SessionView;

  it("matches every word of the search in the title or id, in any case, accents aside, and each filter exactly", () => {
    expect(matchesFilter(session({}), { ...noFilter, text: "login FIX" })).toBe(true);
    expect(matchesFilter(session({}), { ...noFilter, text: "login docs" })).toBe(false);
    expect(matchesFilter(session({ title: "Écrire la doc" }), { ...noFilter, text: "ecrire" })).toBe(true);
    expect(matchesFilter(session({ title: null }), { ...noFilter, text: "a1b2" })).toBe(true);
    expect(matchesFilter(session({}), { ...noFilter, folder: "/w" })).toBe(true);
    expect(matchesFilter(session({}), { ...noFilter, folder: "/w/sub" })).toBe(false);
    expect(matchesFilter(session({}), { ...noFilter, agent: "helper" })).toBe(false);
    // What the agent is doing: a session with neither a turn nor a question nor a last turn is idle.
    expect(matchesFilter(session({ turnActive: false, lastTurn: null }), { ...noFilter, activity: "idle" })).toBe(true);
    expect(matchesFilter(session({ turnActive: true, lastTurn: null }), { ...noFilter, activity: "idle" })).toBe(false);
    expect(
      matchesFilter(session({ turnActive: false, lastTurn: { outcome: "exited", reason: "signal SIGKILL", at: 1 } }), {
        ...noFilter,
        activity: "failed",
      }),
    ).toBe(true);
    expect(matchesFilter(session({}), { ...noFilter, waiting: true })).toBe(false);
    expect(matchesFilter(session({ pendingQuestions: 2 }), { ...noFilter, waiting: true })).toBe(true);
    expect(isFiltering(noFilter)).toBe(false);
    expect(isFiltering({ ...noFilter, text: "  " })).toBe(false);
  });

  it("reads keys as shortcuts only outside text fields, except Escape; steps through the list", () => {
    const key = (k: string, modifiers: Partial<{ ctrlKey: boolean; altKey: boolean; metaKey: boolean }> = {}) => ({
      key: k,
      ctrlKey: false,
      altKey: false,
      metaKey: false,
      ...modifiers,
    });
    expect(shortcutOf(key("j"), "page")).toBe("next-session");
    expect(shortcutOf(key("j"), "prompt")).toBeUndefined();
    expect(shortcutOf(key("Escape"), "prompt")).toBe("cancel-turn");
    // Another field's Escape is its own (a form question's field, a login's address box).
    expect(shortcutOf(key("j"), "field")).toBeUndefined();
    expect(shortcutOf(key("Escape"), "field")).toBeUndefined();
    expect(shortcutOf(key("Escape"), "page")).toBe("cancel-turn");
    // A search field's Escape clears it.
    expect(shortcutOf(key("Escape"), "search")).toBeUndefined();
    expect(shortcutOf(key("?"), "page")).toBe("help");
    expect(shortcutOf(key("k", { ctrlKey: true }), "page")).toBeUndefined();
    expect(shortcutOf(key("x"), "page")).toBeUndefined();
    expect(neighbour(["a", "b", "c"], null, 1)).toBe("a");
    expect(neighbour(["a", "b", "c"], null, -1)).toBe("c");
    expect(neighbour(["a", "b", "c"], "b", 1)).toBe("c");
    expect(neighbour(["a", "b", "c"], "c", 1)).toBe("c");
    expect(neighbour(["a", "b", "c"], "a", -1)).toBe("a");
    expect(neighbour([], "a", 1)).toBeUndefined();
  });
});

describe("finding sessions in a real browser", () => {
  it("shows each line's last activity, and the conversation's last words on hover", async () => {
    main = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions`);
    const { page } = main;
    await expect.poll(() => cards(page).count(), POLL).toBe(3);
    const login = card(page, ids.login);
    const view = suite.server.berth.host.getSession(ids.login)!;
    const lastActivity = Math.max(view.preview!.at, view.lastTurn!.at, view.updatedAt);
    expect(await login.locator(".session-when time").getAttribute("datetime")).toBe(new Date(lastActivity).toISOString());
    expect(await login.getByRole("link").getAttribute("title")).toBe("demo: Fix the login bug");
    // The session whose agent waits on a question: the agent said nothing yet, so the prompt is last.
    expect(await card(page, ids.asking).getByRole("link").getAttribute("title")).toBe("You: /ask Deploy the login page?");
  });

  it("searches titles and filters by folder, agent, what the agent is doing and waiting question", async () => {
    const { page } = main;
    const search = page.getByRole("searchbox", { name: "Search session titles" });
    await search.fill("LOGIN");
    await expect.poll(() => shownIds(page), POLL).toEqual(expect.arrayContaining([ids.login, ids.asking]));
    expect(await cards(page).count()).toBe(2);
    await page.getByRole("status").filter({ hasText: "2 of 3 sessions" }).waitFor();
    await search.fill("cafe");
    await expect.poll(() => shownIds(page), POLL).toEqual([ids.docs]);
    await search.fill("nothing like this");
    await page.getByText("No session matches.").waitFor();
    await page.getByRole("button", { name: "Clear" }).click();
    await expect.poll(() => cards(page).count(), POLL).toBe(3);

    await page.getByLabel("Folder").selectOption(otherFolder);
    await expect.poll(() => shownIds(page), POLL).toEqual([ids.docs]);
    await page.getByLabel("Folder").selectOption("");
    await page.getByLabel("Agent", { exact: true }).selectOption("helper");
    await expect.poll(() => shownIds(page), POLL).toEqual([ids.docs]);
    await page.getByLabel("Agent", { exact: true }).selectOption("");
    await page.getByLabel("Waiting for me").check();
    await expect.poll(() => shownIds(page), POLL).toEqual([ids.asking]);
    await page.getByLabel("Waiting for me").uncheck();
    // What the agent is doing: the asking session's waits for you, the others' are idle.
    await page.getByLabel("State").selectOption({ label: "waiting for you" });
    await expect.poll(() => shownIds(page), POLL).toEqual([ids.asking]);
    await page.getByLabel("State").selectOption({ label: "idle" });
    await expect.poll(async () => (await shownIds(page)).sort(), POLL).toEqual([ids.login, ids.docs].sort());
    await page.getByRole("button", { name: "Clear" }).click();

    // The filter survives a reload of the tab.
    await search.fill("docs");
    await page.reload();
    await expect.poll(() => shownIds(page), POLL).toEqual([ids.docs]);
    expect(await page.getByRole("searchbox", { name: "Search session titles" }).inputValue()).toBe("docs");
    await page.getByRole("button", { name: "Clear" }).click();
    await expect.poll(() => cards(page).count(), POLL).toBe(3);
  });

  it("renames a session from its chat's header: stored, shown in the list, and Escape gives up an edit", async () => {
    const { page } = main;
    await card(page, ids.login).getByRole("link").click();
    const login = page.locator(".chat-head");
    await login.getByRole("button", { name: "Rename Fix the login bug" }).click();
    const input = login.getByLabel("Session title");
    expect(await input.inputValue()).toBe("Fix the login bug");
    await input.fill("Login: the real fix");
    await input.press("Enter");
    await expect.poll(() => login.locator("h2").textContent(), POLL).toBe("Login: the real fix");
    expect(suite.server.berth.host.getSession(ids.login)?.title).toBe("Login: the real fix");
    // Focus goes back to the Rename button.
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('aria-label')"), POLL).toBe("Rename Login: the real fix");

    await login.getByRole("button", { name: "Rename Login: the real fix" }).click();
    await login.getByLabel("Session title").fill("never saved");
    await login.getByLabel("Session title").press("Escape");
    await expect.poll(() => login.getByLabel("Session title").count(), POLL).toBe(0);
    expect(suite.server.berth.host.getSession(ids.login)?.title).toBe("Login: the real fix");

    // Saved empty: the title is cleared, and the card says "Untitled session …".
    await login.getByRole("button", { name: "Rename Login: the real fix" }).click();
    await login.getByLabel("Session title").fill("   ");
    await login.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => login.locator("h2").textContent(), POLL).toBe(`Untitled session ${ids.login.slice(0, 8)}`);
    expect(suite.server.berth.host.getSession(ids.login)?.title).toBeNull();
    await login.getByRole("button", { name: /^Rename Untitled session/ }).click();
    await login.getByLabel("Session title").fill("Login: the real fix");
    await login.getByLabel("Session title").press("Enter");
    await expect.poll(() => login.locator("h2").textContent(), POLL).toBe("Login: the real fix");
    await expect.poll(() => card(page, ids.login).locator(".session-title").textContent(), POLL).toBe("Login: the real fix");

    // A save under way (held here) cannot be cancelled, and typing on elsewhere meanwhile keeps its focus.
    const loginSession = (url: URL) => url.pathname === `/api/sessions/${ids.login}`;
    const save = await holdRequests(page, loginSession, { method: "PATCH" });
    await login.getByRole("button", { name: "Rename Login: the real fix" }).click();
    await login.getByLabel("Session title").fill("Login: fixed for good");
    await login.getByLabel("Session title").press("Enter");
    await save.asked;
    await login.getByRole("button", { name: "Saving…" }).waitFor();
    expect(await login.getByRole("button", { name: "Cancel", exact: true }).isDisabled()).toBe(true);
    const box = page.getByLabel("Message to the agent");
    await box.click();
    save.release();
    await expect.poll(() => login.locator("h2").textContent(), POLL).toBe("Login: fixed for good");
    await nextFrames(page);
    expect(await page.evaluate("document.activeElement?.id")).toBe("prompt-text");
    await page.unroute(loginSession);
    await page.getByRole("button", { name: "Close" }).click();
  });

  it("lists the shortcuts with ?, focuses the search with /, steps through sessions with j and k, jumps to the question with w", async () => {
    const { page } = main;
    await page.keyboard.press("?");
    const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
    await help.waitFor();
    for (const text of [
      "Search sessions",
      "Open the next session in the list",
      "Jump to the question that has waited longest",
      "Cancel the open chat's running turn",
    ]) {
      await help.getByText(text).waitFor();
    }
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "detached" });

    await page.keyboard.press("/");
    await expect.poll(() => page.evaluate("document.activeElement?.id"), POLL).toBe("session-search");
    await page.evaluate("document.activeElement.blur()");

    const order = await shownIds(page);
    await page.keyboard.press("j");
    await expect.poll(() => hashOf(page), POLL).toBe(`#/sessions/${order[0]}`);
    await page.keyboard.press("j");
    await expect.poll(() => hashOf(page), POLL).toBe(`#/sessions/${order[1]}`);
    await page.keyboard.press("k");
    await expect.poll(() => hashOf(page), POLL).toBe(`#/sessions/${order[0]}`);

    await page.keyboard.press("w");
    const question = suite.server.berth.host.pendingQuestions()[0]!;
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('data-question-id')"), POLL).toBe(question.id);
  });

  it("Escape in the prompt box cancels the open chat's running turn, once confirmed", async () => {
    const { page } = main;
    await page.goto(`${suite.server.url}/#/sessions/${ids.docs}`);
    await expect.poll(() => page.locator("#chat-title").textContent(), POLL).toBe("Write the café docs");
    // The chat has read the session (it only reads it: sending holds it).
    await page.getByRole("button", { name: "Resume" }).waitFor();
    const turnsEnded = () =>
      suite.server.berth.host.recentRecords(50).filter((r) => r.record.kind === "turn_ended" && r.record.sessionId === ids.docs);
    const endedBefore = turnsEnded().length;
    const box = page.getByLabel("Message to the agent");
    await box.fill("/sleep 1h");
    await box.press("Enter");
    await waitFor(() => suite.server.berth.host.getSession(ids.docs)?.turnActive === true);
    await box.press("Escape");
    // It asks first.
    await page.getByRole("dialog", { name: "Cancel the running turn?" }).getByRole("button", { name: "Cancel turn" }).click();
    // Records are seen once committed, which may be a moment after the turn is no longer active.
    await waitFor(() => turnsEnded().length > endedBefore);
    expect(turnsEnded().at(-1)?.record).toMatchObject({ stopReason: "cancelled" });
    await screenshot(page, "find-desktop-light");
  });

  it("renames from the chat's header", async () => {
    const { page } = main;
    const header = page.locator(".chat-head");
    await header.getByRole("button", { name: /^Rename / }).click();
    await header.getByLabel("Session title").fill("Docs, renamed in the chat");
    await header.getByLabel("Session title").press("Enter");
    await expect.poll(() => page.locator("#chat-title").textContent(), POLL).toBe("Docs, renamed in the chat");
    await expect.poll(() => card(page, ids.docs).locator(".session-title").textContent(), POLL).toBe("Docs, renamed in the chat");
    await main.close();
  });

  it("keeps a deletion the event stream brought over a snapshot of the sessions and questions read before it", async () => {
    const host = suite.server.berth.host;
    const doomed = await host.createSession({ cwd: suite.server.workDir });
    void host.prompt(doomed.id, [{ type: "text", text: "/ask Keep the doomed branch?" }]).catch(() => undefined);
    await waitUntil(() => host.pendingQuestions(doomed.id).length === 1, "the doomed session's question is pending");
    // The page's first snapshot of the sessions and questions is read, then held back while the stream brings newer changes.
    let snapshot!: HeldRequests;
    const opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions`, undefined, async (page) => {
      snapshot = await holdRequests(page, (url) => url.pathname === "/api/sessions" || url.pathname === "/api/questions", {
        reply: "answered",
        count: 2,
        times: 2,
      });
    });
    const { page } = opened;
    await snapshot.asked;
    // A change the stream brings shows the session before the snapshot is in; then it is deleted.
    host.renameSession(doomed.id, "Deleted after the snapshot");
    await card(page, doomed.id).waitFor();
    await host.deleteSession(doomed.id);
    await card(page, doomed.id).waitFor({ state: "detached" });

    snapshot.release();
    // The snapshot is in (the sessions and the question only it brought are shown): the stream's deletion still stands.
    await card(page, ids.login).waitFor();
    await page.getByText("Deploy the login page?").first().waitFor();
    expect(await card(page, doomed.id).count()).toBe(0);
    expect(await page.getByText("Keep the doomed branch?").count()).toBe(0);
    expect(opened.errors).toEqual([]);
    await opened.close();
  });

  it("fits a phone: the search and filters wrap without sideways scrolling", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions`, { ...phone, colorScheme });
      await expect.poll(() => cards(opened.page).count(), POLL).toBe(3);
      expect(await opened.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
      await screenshot(opened.page, `find-phone-${colorScheme}`);
      expect(opened.errors).toEqual([]);
      await opened.close();
    }
  });
});
