import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { methods } from "@agentclientprotocol/sdk";
import type { Page } from "playwright-core";
import {
  scrollTo,
  connectAcpClient,
  desktop,
  holdRequests,
  launchBrowser,
  nextFrames,
  openPage,
  phone,
  screenshot,
  startDashboardServer,
  waitUntilGone,
  type DashboardServer,
  type LaunchedBrowser,
  type OpenedPage,
} from "./dashboard-harness.js";

const POLL = { timeout: 15_000, interval: 50 };

let server: DashboardServer;
let launched: LaunchedBrowser;
/** The page the main flow runs in: desktop, light. */
let main: OpenedPage;
let sessionId: string;

beforeAll(async () => {
  // A long grace keeps the release countdown on screen while the test looks at it.
  server = await startDashboardServer({ releaseGrace: "60s" });
  launched = await launchBrowser();
});

afterAll(async () => {
  const browserPids = launched ? await launched.pids().catch(() => []) : [];
  await launched?.browser.close();
  await server?.close();
  // Every agent child and every browser process is gone.
  expect(await waitUntilGone([...(server?.childPids() ?? []), ...browserPids])).toEqual([]);
});

// What the main page showed when a test failed, to see why.
afterEach(async ({ task }) => {
  if (task.result?.state === "fail" && main && !main.page.isClosed()) {
    await screenshot(main.page, `failed-${task.name.replace(/\W+/g, "-").slice(0, 60)}`);
  }
});

/** The session's line in the list. */
function row(page: Page, id: string) {
  return page.locator(`li.session-row[data-session-id="${id}"]`);
}

/** The open chat's details: its agent process, pid, clients, running turn. */
const details = (page: Page) => page.locator("#chat-details");
const clients = (page: Page) => details(page).locator(".term", { hasText: /^open in/ });

/** The session's agent process on the Host page. */
function processCell(page: Page, id: string, cell: string) {
  return page.locator(`tr[data-session-id="${id}"] ${cell}`);
}

/** A page of its own on `path` (the main page keeps its chat open), closed after `look`. */
async function onAnotherPage(path: string, look: (page: Page) => Promise<void>): Promise<void> {
  const other = await openPage(launched.browser, server.url, `/?token=${server.token}${path}`, desktop);
  try {
    await look(other.page);
    expect(other.errors).toEqual([]);
  } finally {
    await other.close();
  }
}

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByLabel("Message to the agent");
  await box.fill(text);
  await box.press("Enter");
}

const transcript = (page: Page) => page.getByRole("log", { name: "Conversation" });

describe("the dashboard in a real browser against a real Berth", () => {
  it("takes the token from the link once, keeps it out of the address bar and goes live", async () => {
    main = await openPage(launched.browser, server.url, `/?token=${server.token}`);
    const { page } = main;
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    // With no session yet, the root address leads to the (empty) list.
    await expect.poll(() => page.url(), POLL).toBe(`${server.url}/#/sessions`);
    expect(await page.evaluate("sessionStorage.getItem('berth.token')")).toBe(server.token);
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Live" }).count(), POLL).toBe(1);
    expect(await page.content()).not.toContain(server.token);
    for (const landmark of ["banner", "main"] as const) expect(await page.getByRole(landmark).count()).toBe(1);
  });

  it("starts a demo session in a directory and opens its chat", async () => {
    const { page } = main;
    await page.getByRole("banner").getByRole("button", { name: "New session" }).click();
    const dialog = page.getByRole("dialog", { name: "New session" });
    await dialog.getByLabel("Agent").selectOption("demo");
    await dialog.getByLabel("Directory").fill("relative/dir");
    await dialog.getByRole("button", { name: "Start session" }).click();
    await dialog.getByText("must be an absolute path").waitFor();

    await dialog.getByLabel("Directory").fill(server.workDir);
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL(/#\/sessions\//);
    sessionId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
    expect(server.berth.host.getSession(sessionId)).toMatchObject({ agent: "demo", cwd: server.workDir });

    // The chat's details say where its agent process is; the list says what the agent is doing.
    await expect.poll(() => clients(page).textContent(), POLL).toBe("open in 1 client");
    await expect.poll(() => details(page).locator(".badge").textContent(), POLL).toBe("running");
    expect(await details(page).locator(".badge").getAttribute("title")).toMatch(/^live: /);
    expect(await clients(page).getAttribute("title")).toMatch(/^holders: /);
    expect(await details(page).locator(".pid").textContent()).toBe(`pid ${server.berth.host.getSession(sessionId)!.pid}`);
    await expect.poll(() => row(page, sessionId).locator(".chip").textContent(), POLL).toBe("idle");
  });

  it("a New session dialog opened before the agents are listed takes the default agent once they are", async () => {
    const early = await openPage(launched.browser, server.url, `/?token=${server.token}`);
    const { page } = early;
    // The agents' list is held back until the dialog is open (what a slow host or network does).
    const held: Array<() => Promise<void>> = [];
    await page.route(/\/api\/agents$/, (route) => void held.push(() => route.continue()));
    await page.reload();
    await page.getByRole("banner").getByRole("button", { name: "New session" }).click();
    const dialog = page.getByRole("dialog", { name: "New session" });
    await dialog.getByLabel("Directory").fill(server.workDir);
    await expect.poll(() => held.length, POLL).toBeGreaterThan(0);
    expect(await dialog.getByRole("button", { name: "Start session" }).isDisabled()).toBe(true);
    for (const release of held.splice(0)) await release();
    await page.unroute(/\/api\/agents$/);
    await expect.poll(() => dialog.getByLabel("Agent").inputValue(), POLL).toBe("demo");
    await expect.poll(() => dialog.getByRole("button", { name: "Start session" }).isEnabled(), POLL).toBe(true);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect(early.errors).toEqual([]);
    await early.close();
  });

  it("sends a prompt with Enter and shows the streamed reply", async () => {
    const { page } = main;
    await send(page, "Hello from the browser");
    await transcript(page).locator(".message.user", { hasText: "Hello from the browser" }).waitFor();
    await transcript(page).locator(".message.agent", { hasText: "Hello from the browser" }).waitFor();
    // The prompt became the session's title, shown live.
    await expect.poll(() => page.locator("#chat-title").textContent(), POLL).toBe("Hello from the browser");
    await onAnotherPage("#/host", async (host) => {
      await expect.poll(() => host.getByRole("list", { name: /lifecycle/i }).textContent(), POLL).toContain("turn ended");
    });
  });

  it("Shift+Enter makes a new line instead of sending", async () => {
    const box = main.page.getByLabel("Message to the agent");
    await box.fill("first line");
    await box.press("Shift+Enter");
    await box.pressSequentially("second line");
    expect(await box.inputValue()).toBe("first line\nsecond line");
    await box.fill("");
  });

  it("shows a /run tool call with its terminal output", async () => {
    const { page } = main;
    await send(page, "/run echo shell-says-hi");
    const tool = transcript(page).getByRole("article", { name: "Tool call: echo shell-says-hi" });
    await expect.poll(() => tool.locator(".badge").textContent(), POLL).toBe("completed");
    expect(await tool.locator("pre.output").textContent()).toContain("shell-says-hi");
    expect(await tool.textContent()).toContain("exit 0");
  });

  it("answers /ask from another page's Questions panel (REST); the chat's copy is withdrawn", async () => {
    const { page } = main;
    await send(page, "/ask Deploy to production?");
    // In the chat, the question waits in the conversation (only there: no strip points to it); its line says so.
    const ask = transcript(page).getByRole("group").filter({ hasText: "Deploy to production?" });
    await ask.waitFor();
    await expect.poll(() => row(page, sessionId).locator(".chip").textContent(), POLL).toBe("waiting for you");
    expect(await page.getByRole("complementary", { name: "Waiting for you" }).count()).toBe(0);
    await screenshot(page, "desktop-light-question");

    // Another page, with no chat open, answers it from its Questions panel with its own buttons.
    await onAnotherPage("#/sessions", async (other) => {
      const panel = other.getByRole("region", { name: /Questions/ });
      const question = panel.getByRole("listitem").filter({ hasText: "Deploy to production?" });
      await question.getByRole("button", { name: "Allow" }).click();
      await transcript(page).locator(".message.agent", { hasText: "You chose: allow" }).waitFor();
      await ask.waitFor({ state: "detached" });
      await expect.poll(() => panel.getByRole("listitem").count(), POLL).toBe(0);
    });
    await expect.poll(() => row(page, sessionId).locator(".chip").textContent(), POLL).toBe("idle");
  });

  it("answers /ask in the chat (ACP)", async () => {
    const { page } = main;
    await send(page, "/ask Drop the database?");
    const ask = transcript(page).getByRole("group").filter({ hasText: "Drop the database?" });
    await ask.getByRole("button", { name: "Deny" }).click();
    await transcript(page).locator(".message.agent", { hasText: "You chose: deny" }).waitFor();
    await expect.poll(() => row(page, sessionId).locator(".chip").textContent(), POLL).toBe("idle");
    await onAnotherPage("#/sessions", async (other) => {
      await other
        .getByRole("region", { name: /Questions/ })
        .getByText("Nothing is waiting for you.")
        .waitFor();
    });
  });

  it("answers an /elicit form, whose typed answer stays while its row is scrolled out of view and back", async () => {
    const { page } = main;
    // A tall reply above the form: scrolled to the top, the conversation no longer renders the form's row.
    const turnsEnded = () => server.berth.host.events(sessionId).filter((event) => event.kind === "turn_ended").length;
    const before = turnsEnded();
    await send(page, "/flood 100 200");
    await expect.poll(turnsEnded, POLL).toBe(before + 1);
    await send(page, "/elicit What is your name?");
    const ask = transcript(page).getByRole("group").filter({ hasText: "What is your name?" });
    await ask.getByLabel("Answer").fill("Ada");
    await transcript(page).hover();
    await page.mouse.wheel(0, -400);
    await transcript(page).evaluate((log) => {
      log.scrollTop = 0;
    });
    await ask.waitFor({ state: "detached" });
    await scrollTo(ask);
    expect(await ask.getByLabel("Answer").inputValue()).toBe("Ada");
    await ask.getByRole("button", { name: "Submit" }).click();
    await transcript(page).locator(".message.agent", { hasText: 'Elicitation action: accept, content: {"answer":"Ada"}' }).waitFor();

    // The same kind of form, answered from the Questions panel of a page with no chat open, over REST.
    await send(page, "/elicit Favourite colour?");
    await onAnotherPage("#/sessions", async (other) => {
      const question = other
        .getByRole("region", { name: /Questions/ })
        .getByRole("listitem")
        .filter({ hasText: "Favourite colour?" });
      await question.getByLabel("Answer").fill("blue");
      await question.getByRole("button", { name: "Submit" }).click();
      await transcript(page).locator(".message.agent", { hasText: 'Elicitation action: accept, content: {"answer":"blue"}' }).waitFor();
    });
  });

  it("cancels a running turn", async () => {
    const { page } = main;
    await send(page, "/sleep 1h");
    const cancel = page.getByRole("button", { name: "Cancel turn" });
    await expect.poll(() => cancel.isEnabled(), POLL).toBe(true);
    await expect.poll(() => details(page).textContent(), POLL).toMatch(/turn running \d+s/);
    await expect.poll(() => row(page, sessionId).locator(".chip").textContent(), POLL).toBe("working");
    await cancel.click();
    await transcript(page).locator(".stop", { hasText: "Turn ended: cancelled" }).waitFor();
    await expect.poll(() => details(page).textContent(), POLL).not.toContain("turn running");
    await expect.poll(() => row(page, sessionId).locator(".chip").textContent(), POLL).toBe("stopped");
  });

  it("replays the transcript when the session is opened again", async () => {
    const { page } = main;
    await page.getByRole("button", { name: "Close" }).click();
    await page.waitForURL(`${server.url}/#/sessions`);
    await expect.poll(() => page.locator(".chat").count(), POLL).toBe(0);
    await row(page, sessionId).getByRole("link").click();
    // The transcript is virtualized: rows far from the viewport are not in the page until scrolled to.
    await scrollTo(transcript(page).locator(".message.user", { hasText: "Hello from the browser" }));
    await scrollTo(transcript(page).getByRole("article", { name: "Tool call: echo shell-says-hi" }));
    await scrollTo(transcript(page).locator(".message.agent", { hasText: "You chose: deny" }));
    await scrollTo(transcript(page).locator(".stop", { hasText: "Turn ended: cancelled" }));
  });

  it("shows the holder count drop when another client disconnects, and the release countdown start", async () => {
    const { page } = main;
    await page.getByRole("button", { name: "Close" }).click();
    // The Host page, from the top bar, shows each session's agent process.
    await page.getByRole("link", { name: "Host", exact: true }).click();
    await expect.poll(() => processCell(page, sessionId, ".holders").textContent(), POLL).toBe("0");

    const other = await connectAcpClient(server);
    const { cwd } = server.berth.host.getSession(sessionId)!;
    await other.agent.request(methods.agent.session.resume, { sessionId, cwd, mcpServers: [] });
    await expect.poll(() => processCell(page, sessionId, ".holders").textContent(), POLL).toBe("1");
    expect(await processCell(page, sessionId, ".release").count()).toBe(0);

    other.close();
    await expect.poll(() => processCell(page, sessionId, ".holders").textContent(), POLL).toBe("0");
    const release = processCell(page, sessionId, ".release");
    await expect.poll(() => release.textContent(), POLL).toMatch(/stops in \d+s/);
    expect(await release.getAttribute("title")).toMatch(/^release grace: /);
    // It counts down locally.
    const first = Number(/in (\d+)s/.exec((await release.textContent())!)![1]);
    await expect.poll(async () => Number(/in (\d+)s/.exec((await release.textContent()) ?? "")?.[1]), POLL).toBeLessThan(first);
    await screenshot(page, "desktop-light-host");
  });

  it("shows locations with why they are kept, their deadlines and services", async () => {
    const { page } = main;
    const location = page.getByRole("region", { name: /Locations/ }).locator("li.location", { hasText: server.workDir });
    await location.waitFor();
    expect(await location.locator("dt:text-is('Kept by') + dd").textContent()).toBe("idle timeout");
    // The plain words carry the design's terms on hover.
    expect(await location.locator("dt:text-is('Kept by') + dd .term").getAttribute("title")).toMatch(/^idle TTL: /);
    expect(await location.locator(".badge").first().textContent()).toBe("kept");
    expect(await location.locator(".badge").first().getAttribute("title")).toMatch(/^retained: /);
    expect(await location.locator("dt:text-is('Closes if idle') + dd").textContent()).toMatch(/^in \d+m/);
    expect(await location.locator("dt:text-is('Hard limit') + dd").textContent()).toMatch(/^in \d+h/);
  });

  it("deletes a session after a confirmation", async () => {
    const { page } = main;
    await page.getByRole("link", { name: "Berth" }).click();
    // From its open chat: the chat closes with it.
    await row(page, sessionId).getByRole("link").click();
    await transcript(page).locator(".message").first().waitFor();
    const dialog = page.getByRole("dialog", { name: "Delete this session?" });
    await page.locator(".chat").getByRole("button", { name: "Delete" }).click();
    await dialog.getByRole("button", { name: "Keep it" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(server.berth.host.getSession(sessionId)).toBeDefined();

    // While the deletion is under way (held here) the dialog stays: Keep it is disabled, Escape leaves it open.
    const thisSession = (url: URL) => url.pathname === `/api/sessions/${sessionId}`;
    const deletion = await holdRequests(page, thisSession, { method: "DELETE" });
    await page.locator(".chat").getByRole("button", { name: "Delete" }).click();
    await dialog.getByRole("button", { name: "Delete session" }).click();
    await deletion.asked;
    await dialog.getByRole("button", { name: "Deleting…" }).waitFor();
    expect(await dialog.getByRole("button", { name: "Keep it" }).isDisabled()).toBe(true);
    await page.keyboard.press("Escape");
    await nextFrames(page);
    expect(await dialog.isVisible()).toBe(true);
    // Closed all the same (a browser lets a second Escape through), then another dialog opened: the deletion's end
    // closes nothing but its own dialog.
    await page.evaluate(`document.querySelector("dialog[open]").close()`);
    await dialog.waitFor({ state: "detached" });
    await page.keyboard.press("?");
    const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
    await help.waitFor();
    deletion.release();
    await row(page, sessionId).waitFor({ state: "detached" });
    await nextFrames(page);
    expect(await help.isVisible()).toBe(true);
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "detached" });
    await page.unroute(thisSession);
    await page.waitForURL(`${server.url}/#/sessions`);
    await page.locator(".chat").waitFor({ state: "detached" });
    expect(server.berth.host.getSession(sessionId)).toBeUndefined();
    expect(main.errors).toEqual([]);
    await main.close();
  });

  it("refuses a wrong token: the API answers 401, and a page whose token is refused says how to get in", async () => {
    // The page is code without data and needs no token; the API refuses the wrong one and the page says how to get in.
    const wrong = await openPage(launched.browser, server.url, "/?token=wrong-token");
    expect(wrong.status).toBe(200);
    await wrong.page.getByRole("heading", { name: "Open the link Berth printed" }).waitFor();
    // The command is named as this Berth was started (a checkout, from its root), so it works as shown.
    expect(await wrong.page.locator(".auth-card code").first().textContent()).toBe("node dist/cli/main.js token --link");
    expect(await wrong.page.content()).not.toContain("wrong-token");
    expect(wrong.page.url()).toBe(`${server.url}/`);
    await wrong.close();

    // A page whose token the API refuses after a reload, e.g. after the token changed.
    const stale = await openPage(launched.browser, server.url, `/?token=${server.token}`);
    await stale.page.getByRole("heading", { name: "Sessions" }).waitFor();
    await stale.page.evaluate("sessionStorage.setItem('berth.token', 'a-token-that-is-no-longer-valid')");
    await stale.page.reload();
    await stale.page.getByRole("heading", { name: "Open the link Berth printed" }).waitFor();
    expect(await stale.page.content()).not.toContain("a-token-that-is-no-longer-valid");
    await screenshot(stale.page, "refused-token");
    await stale.close();
  });
});

describe("eviction history", () => {
  it("shows a location that went idle being evicted, in the feed and the history", async () => {
    const quick = await startDashboardServer({ idleTtl: "1s", sweepInterval: "200ms", releaseGrace: "200ms" });
    try {
      const opened = await openPage(launched.browser, quick.url, `/?token=${quick.token}#/host`);
      const { page } = opened;
      await page.getByRole("heading", { name: "Locations" }).waitFor();
      const session = await quick.berth.host.createSession({ cwd: quick.workDir });
      await quick.berth.host.prompt(session.id, [{ type: "text", text: "one durable event" }]);

      const history = page.getByRole("region", { name: /Locations/ }).locator("ul.history");
      await expect.poll(() => history.textContent(), POLL).toContain(quick.workDir);
      expect(await history.textContent()).toContain("idle");
      await expect.poll(() => page.getByRole("list", { name: /lifecycle/i }).textContent(), POLL).toContain("location services evicted");
      await expect
        .poll(
          () =>
            page
              .getByRole("region", { name: /Locations/ })
              .locator("li.location")
              .count(),
          POLL,
        )
        .toBe(0);
      expect(opened.errors).toEqual([]);
      await opened.close();
    } finally {
      const pids = quick.childPids();
      await quick.close();
      expect(await waitUntilGone(pids)).toEqual([]);
    }
  });
});

describe("looks", () => {
  /** A session with some history, a pending question and a chat open: what a person typically sees. */
  async function busyDashboard(page: Page): Promise<void> {
    await page.getByRole("banner").getByRole("button", { name: "New session" }).click();
    const dialog = page.getByRole("dialog", { name: "New session" });
    await dialog.getByLabel("Directory").fill(server.workDir);
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL(/#\/sessions\//);
    await send(page, "Summarise the build status");
    await transcript(page).locator(".message.agent", { hasText: "Summarise the build status" }).waitFor();
    await send(page, "/run printf 'compiling...\\nall 42 tests passed\\n'");
    await transcript(page).getByRole("article").locator(".badge", { hasText: "completed" }).waitFor();
    await send(page, "/ask Push the release tag v1.4.0?");
    await transcript(page).locator(".question-row.waiting").waitFor();
  }

  for (const scheme of ["light", "dark"] as const) {
    it(`desktop, ${scheme}`, async () => {
      // On the list: the root address would open the last session, whose address the new one's is waited for after.
      const opened = await openPage(launched.browser, server.url, `/?token=${server.token}#/sessions`, { ...desktop, colorScheme: scheme });
      await busyDashboard(opened.page);
      await opened.page.evaluate("document.activeElement.blur()");
      await screenshot(opened.page, `desktop-${scheme}-chat`);
      await opened.page.getByRole("button", { name: "Cancel turn" }).click();
      expect(opened.errors).toEqual([]);
      await opened.close();
    });

    it(`phone width (390 px), ${scheme}: nothing overflows sideways`, async () => {
      const opened = await openPage(launched.browser, server.url, `/?token=${server.token}#/sessions`, { ...phone, colorScheme: scheme });
      const { page } = opened;
      await page.getByRole("heading", { name: "Sessions" }).waitFor();
      await page.locator("li.session-row").first().waitFor();
      const overflow = () => page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth");
      expect(await overflow()).toBe(0);
      await screenshot(page, `phone-${scheme}-list`);
      await page.locator("li.session-row").first().getByRole("link").click();
      await transcript(page).locator(".message").first().waitFor();
      expect(await overflow()).toBe(0);
      // On a phone the chat takes the whole page.
      expect(await page.getByRole("navigation", { name: /Sessions/ }).isVisible()).toBe(false);
      await screenshot(page, `phone-${scheme}-chat`);
      expect(opened.errors).toEqual([]);
      await opened.close();
    });
  }
});
