import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BerthProcess } from "../server/serve-process.js";
import { launchBrowser, openPage, screenshot, waitUntilGone, type LaunchedBrowser, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 30_000, interval: 50 };
/** How long the page is watched with Berth down (real time: the page's own timers decide when it tries). */
const WATCHED_MS = 25_000;

/** `berth serve` as a real child process, stopped by its pid and started again on the same port and data directory. */
class BerthChild {
  process: BerthProcess | null = null;
  port = 0;
  url = "";
  token = "";
  readonly pids = new Set<number>();
  readonly dataDir = mkdtempSync(join(tmpdir(), "berth-web-reconnect-data-"));
  readonly workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-web-reconnect-work-")));

  async start(): Promise<void> {
    const child = new BerthProcess(["serve", "--port", String(this.port), "--data-dir", this.dataDir], { XDG_CONFIG_HOME: this.dataDir });
    this.process = child;
    this.pids.add(child.pid);
    const { url, token } = await child.startupLine();
    this.url = url;
    this.token = token;
    this.port = Number(new URL(url).port);
  }

  /** SIGTERM to its pid: Berth stops its agents and exits. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child) return;
    this.process = null;
    child.signal("SIGTERM");
    await child.exited;
    child.killGroup();
  }

  async rest<T>(path: string): Promise<T> {
    const response = await fetch(`${this.url}${path}`, { headers: { authorization: `Bearer ${this.token}` } });
    return (await response.json()) as T;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.workDir, { recursive: true, force: true });
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

let host: BerthChild;
let launched: LaunchedBrowser;
let main: OpenedPage | undefined;

beforeAll(async () => {
  host = new BerthChild();
  await host.start();
  launched = await launchBrowser();
});

afterAll(async () => {
  await main?.close();
  const browserPids = launched ? await launched.pids().catch(() => []) : [];
  await launched?.browser.close();
  await host?.remove();
  expect(await waitUntilGone([...(host?.pids ?? []), ...browserPids])).toEqual([]);
});

const transcript = (page: Page) => page.getByRole("log", { name: "Conversation" });
const header = (page: Page) => page.locator(".chat-head .meta");
const cancelButton = (page: Page) => page.getByRole("button", { name: "Cancel turn" });

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByLabel("Message to the agent");
  await box.fill(text);
  await box.press("Enter");
}

/** What the page asked of Berth, by path, while it was watched. */
function watchRequests(page: Page): { readonly paths: string[]; readonly sockets: string[] } {
  const seen = { paths: [] as string[], sockets: [] as string[] };
  page.on("request", (request) => seen.paths.push(new URL(request.url()).pathname));
  page.on("websocket", (socket) => seen.sockets.push(new URL(socket.url()).pathname));
  return seen;
}

describe("a chat whose Berth goes away", () => {
  it("backs off while Berth is down, shows the header as last known with Cancel disabled, and recovers once it is back", async () => {
    main = await openPage(launched.browser, host.url, `/?token=${host.token}#/sessions`);
    const { page } = main;
    await page.getByRole("banner").getByRole("button", { name: "New session" }).click();
    const dialog = page.getByRole("dialog", { name: "New session" });
    await dialog.getByLabel("Directory").fill(host.workDir);
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL(/#\/sessions\//);
    const sessionId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));

    await send(page, "/sleep 1h");
    await expect.poll(() => cancelButton(page).isEnabled(), POLL).toBe(true);
    await header(page).getByText("turn running").waitFor();
    const { pid } = await host.rest<{ pid: number | null }>(`/api/sessions/${sessionId}`);
    if (pid !== null) host.pids.add(pid);

    const seen = watchRequests(page);
    await host.stop();
    const lost = page.getByRole("status").filter({ hasText: "Berth cannot be reached" });
    await lost.waitFor();
    // What the header says may no longer be so: shown as last known, and nothing can be cancelled from here.
    await header(page)
      .getByText(/last known, as of \d/)
      .waitFor();
    expect(await header(page).getAttribute("class")).toContain("stale");
    expect(await cancelButton(page).isDisabled()).toBe(true);
    await screenshot(page, "chat-berth-down");

    await page.waitForTimeout(WATCHED_MS);
    const chatAttempts = seen.paths.filter((path) => path.startsWith(`/api/sessions/${encodeURIComponent(sessionId)}`)).length + seen.sockets.length;
    const streamAttempts = seen.paths.filter((path) => path === "/api/agents").length;
    // 0.5 s doubling (±20 %): six attempts at most in 25 s; without the backoff, dozens.
    expect(chatAttempts, `the chat's requests: ${JSON.stringify(seen)}`).toBeGreaterThanOrEqual(3);
    expect(chatAttempts, `the chat's requests: ${JSON.stringify(seen)}`).toBeLessThanOrEqual(8);
    expect(streamAttempts, `the event stream's attempts: ${JSON.stringify(seen)}`).toBeLessThanOrEqual(8);
    expect(await lost.textContent()).toMatch(/attempt [4-9]/);
    expect(await cancelButton(page).isDisabled()).toBe(true);

    await host.start();
    // The next attempt finds it by itself (at most 18 s away by now).
    await lost.waitFor({ state: "detached", timeout: 40_000 });
    await expect.poll(() => header(page).getAttribute("class"), POLL).not.toContain("stale");
    await send(page, "Back again");
    await transcript(page).locator(".message.agent", { hasText: "Back again" }).waitFor({ timeout: 30_000 });
    const after = await host.rest<{ pid: number | null }>(`/api/sessions/${sessionId}`);
    if (after.pid !== null) host.pids.add(after.pid);
    expect(main.errors).toEqual([]);
  }, 150_000);
});
