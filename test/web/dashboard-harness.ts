import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { client, methods, PROTOCOL_VERSION, type ClientConnection } from "@agentclientprotocol/sdk";
import { createWebSocketStream, type WebSocketConstructor } from "@agentclientprotocol/sdk/experimental/ws-client";
import type { Locator, Page, Route } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { WebSocket } from "ws";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/load-config.js";
import { silentLogger } from "../../src/host/logger.js";
import { startBerth, type BerthOptions, type RunningBerth } from "../../src/server/serve.js";

import { waitUntilGone } from "../support/process-table.js";
import { launchBrowser, type LaunchedBrowser } from "./browser-harness.js";

export { waitUntilGone };
export { desktop, launchBrowser, openPage, phone, type LaunchedBrowser, type OpenedPage } from "./browser-harness.js";

/** What `npm run build` produced: the dashboard as `berth serve` serves it. */
export const webDir = fileURLToPath(new URL("../../dist/web/", import.meta.url));
const artifactsDir = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));

export interface DashboardServer {
  readonly berth: RunningBerth;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly token: string;
  /** A real directory for sessions to work in. */
  readonly workDir: string;
  /** Every agent child the host started, for the leak check. */
  readonly childPids: () => number[];
  close(): Promise<void>;
}

/** A real Berth (host, REST, SSE, ACP over WebSocket, the built dashboard) on 127.0.0.1, any free port. */
export async function startDashboardServer(config: ConfigInput = {}, options: Pick<BerthOptions, "loginCommands"> = {}): Promise<DashboardServer> {
  if (!existsSync(join(webDir, "index.html"))) throw new Error(`the dashboard is not built (no ${webDir}index.html): run npm run build`);
  const dataDir = mkdtempSync(join(tmpdir(), "berth-web-data-"));
  const workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-web-work-")));
  const berth = await startBerth({ config: parseConfig(config), dataDir, listenHost: "127.0.0.1", port: 0, log: silentLogger(), webDir, ...options });
  const pids = new Set<number>();
  berth.host.onRecord(({ record }) => {
    if (record.kind === "child_acquired") pids.add(record.pid);
  });
  return {
    berth,
    url: berth.server.url,
    token: berth.token,
    workDir,
    childPids: () => [...pids],
    async close() {
      await berth.shutdown();
      rmSync(workDir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(artifactsDir, { recursive: true });
  const path = join(artifactsDir, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/** An ACP client of Berth from Node (like an editor would be), on the server's `/acp`. */
export async function connectAcpClient(server: DashboardServer): Promise<ClientConnection> {
  const url = `${server.url.replace("http", "ws")}/acp`;
  const headers = { authorization: `Bearer ${server.token}` };
  const connection = client({ name: "dashboard-test-client" })
    .onNotification(methods.client.session.update, () => undefined)
    .connect(createWebSocketStream(url, { WebSocket: WebSocket as unknown as WebSocketConstructor, headers }));
  await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  return connection;
}

/**
 * Scrolls the (virtualized) transcript from its top down until `target` is in the page and visible:
 * rows far from the viewport are not rendered, so a search of the page alone would miss them.
 */
export async function scrollTo(target: Locator, log: Locator = target.page().getByRole("log", { name: "Conversation" })): Promise<void> {
  // A chat just opened is still reading its journal: scrolling an empty log would find nothing.
  await log.locator(".row").first().waitFor();
  // The journal may still be arriving (read in pages) when a pass reaches the end: pass again, from the top, until found.
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    if (await scrollPass(target, log)) return;
  }
  await target.first().waitFor({ timeout: 5_000 });
}

/** One pass over the transcript from its top down; true once `target` is shown. */
async function scrollPass(target: Locator, log: Locator): Promise<boolean> {
  // A person scrolling up: the transcript stops following its end.
  await log.hover();
  await log.page().mouse.wheel(0, -400);
  await log.evaluate((element) => {
    element.scrollTop = 0;
  });
  for (let step = 0; step < 400; step++) {
    // Found and scrolled to in one evaluation: the virtualizer may unmount a row between two calls, and a locator's
    // own evaluate would then wait its whole timeout for the row to come back.
    const found = await target.evaluateAll((elements) => {
      elements[0]?.scrollIntoView({ block: "center" });
      return elements.length > 0;
    });
    if (found) {
      // Rows move while the virtualizer measures them: look again once they are drawn.
      await nextFrames(log.page());
      if (await target.first().isVisible()) return true;
      continue;
    }
    const moved = await log.evaluate((element) => {
      const before = element.scrollTop;
      element.scrollTop = before + element.clientHeight * 0.8;
      return element.scrollTop !== before;
    });
    // The virtualizer renders the newly visible rows in the next frame.
    await nextFrames(log.page());
    if (!moved && (await target.count()) === 0) break;
  }
  return false;
}

/** Waits until the page has rendered two more frames (the virtualizer lays out rows in the frame after a scroll). */
export function nextFrames(page: Page): Promise<unknown> {
  return page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
}

/** Requests the page sent that a test holds until it lets them go. */
export interface HeldRequests {
  /** Settles once `count` of them were held. */
  readonly asked: Promise<void>;
  /** Lets the held ones (and any later one) go on. */
  release(): void;
}

/**
 * Holds the page's requests to the URLs `matches` takes (of `method`, if given; only the first `times`, if given):
 * `late`, the server gets each once released; `answered`, the server answers at once and the page gets the answer
 * once released; or the page gets this answer instead, once released. Undo it with `page.unroute(matches)`.
 */
export async function holdRequests(
  page: Page,
  matches: (url: URL) => boolean,
  {
    method,
    count = 1,
    times,
    reply = "late",
  }: { method?: string; count?: number; times?: number; reply?: "late" | "answered" | { status: number; json: unknown } } = {},
): Promise<HeldRequests> {
  let held = 0;
  let asked!: () => void;
  const askedAll = new Promise<void>((resolve) => (asked = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hold = async (route: Route) => {
    if (method !== undefined && route.request().method() !== method) return route.fallback();
    const response = reply === "answered" ? await route.fetch() : undefined;
    if (++held === count) asked();
    await released;
    if (reply === "late") await route.continue();
    else await route.fulfill(response ? { response } : (reply as { status: number; json: unknown }));
  };
  await page.route(matches, hold, times === undefined ? undefined : { times });
  return { asked: askedAll, release };
}

/**
 * For a test file: a real Berth and Debian's Chromium, started before its tests and stopped after
 * them, when every agent child and browser process must be gone. Read the fields inside tests.
 */
export function dashboardSuite(
  config: ConfigInput = {},
  options: Pick<BerthOptions, "loginCommands"> = {},
): { readonly server: DashboardServer; readonly launched: LaunchedBrowser } {
  const suite = {} as { server: DashboardServer; launched: LaunchedBrowser };
  beforeAll(async () => {
    suite.server = await startDashboardServer(config, options);
    suite.launched = await launchBrowser();
  });
  afterAll(async () => {
    const browserPids = suite.launched ? await suite.launched.pids().catch(() => []) : [];
    await suite.launched?.browser.close();
    await suite.server?.close();
    expect(await waitUntilGone([...(suite.server?.childPids() ?? []), ...browserPids])).toEqual([]);
  });
  return suite;
}
