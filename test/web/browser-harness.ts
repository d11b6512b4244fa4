import { chromium, type Browser, type BrowserContextOptions, type Page } from "playwright-core";
import { chromiumArgs, chromiumPath } from "../../src/bench/debian-chromium.js";

// Debian's Chromium and its pages, without a Berth in the test's own process: a file that drives the dashboard of
// `berth serve` children imports only this (dashboard-harness.ts imports the whole server).

export interface LaunchedBrowser {
  readonly browser: Browser;
  /** The browser's own processes (browser, renderers, GPU...), for the leak check. */
  readonly pids: () => Promise<number[]>;
}

/** Debian's Chromium, headless, driven by playwright-core (never a downloaded browser). */
export async function launchBrowser(): Promise<LaunchedBrowser> {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs] });
  const seen = new Set<number>();
  return {
    browser,
    async pids() {
      const cdp = await browser.newBrowserCDPSession();
      const { processInfo } = (await cdp.send("SystemInfo.getProcessInfo")) as { processInfo: { id: number }[] };
      await cdp.detach();
      for (const { id } of processInfo) seen.add(id);
      return [...seen];
    },
  };
}

export interface OpenedPage {
  readonly page: Page;
  /** The HTTP status of the first load. */
  readonly status: number | undefined;
  /** Uncaught errors of the page: a test fails if there are any. */
  readonly errors: string[];
  close(): Promise<void>;
}

export const desktop: BrowserContextOptions = { viewport: { width: 1366, height: 900 }, colorScheme: "light" };
export const phone: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 2,
  isMobile: true,
  hasTouch: true,
  colorScheme: "light",
};

/** A fresh browser context (no cookies, no storage) at `path` of the server; `prepare` runs on the page before it loads. */
export async function openPage(
  browser: Browser,
  url: string,
  path: string,
  options: BrowserContextOptions = desktop,
  prepare: (page: Page) => Promise<void> = async () => undefined,
): Promise<OpenedPage> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await prepare(page);
  const response = await page.goto(`${url}${path}`);
  return { page, status: response?.status(), errors, close: () => context.close() };
}
