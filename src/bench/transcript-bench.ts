import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { type Browser, chromium, type Page } from "playwright-core";
import { fmt, table } from "./measure.js";
import { startServe, stopServe, wsClient, type ServeProcess } from "./relay-bench.js";
import { chromiumArgs, chromiumPath } from "./debian-chromium.js";

/** Chunk counts of `/flood N 16`, the long replies of issue 11. */
const FLOODS = (process.env.BERTH_BENCH_FLOODS?.split(",").map(Number) ?? [2_000, 20_000, 200_000]) as readonly number[];
const CHUNK_BYTES = 16;

/** Records the page's longest main-thread task (Long Tasks API), from the moment the page starts. */
const LONGTASK_OBSERVER = `
  window.__longest = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longest = Math.max(window.__longest, entry.duration);
  }).observe({ type: "longtask", buffered: true });
`;

/**
 * The dashboard's conversation under a long reply, in Debian's Chromium against a real `berth serve`:
 * how long the host takes to relay `/flood N 16` to a Node ACP client, how long the page takes to
 * show all of it (live, and when the session is opened again from its journal), and the page's
 * longest main-thread task meanwhile. Goals (issue 11): 200,000 chunks shown within 2x the relay
 * time, no task over 100 ms.
 */
export async function runTranscriptBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-transcript-"));
  const workDir = mkdtempSync(join(tmpdir(), "berth-bench-transcript-work-"));
  const serve = await startServe(dataDir);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs] });
  try {
    await firstLoads(browser, serve, workDir);
    for (const chunks of FLOODS) {
      const relayMs = await relayTime(serve, workDir, chunks);
      const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
      await page.addInitScript(LONGTASK_OBSERVER);
      const live = await liveTime(page, serve, workDir, chunks);
      const reopened = await reopenTime(page, chunks);
      await page.close();
      table(`Dashboard transcript, /flood ${fmt.int(chunks)} ${CHUNK_BYTES} (${fmt.int((chunks * CHUNK_BYTES) / 1000)} kB)`, [
        ["host relay to a Node ACP client (prompt → response)", fmt.ms(relayMs)],
        ["page: prompt → all text shown", fmt.ms(live.shownMs), `≤ 2 × relay = ${fmt.ms(2 * relayMs)}`],
        ["page: longest main-thread task while streaming", longTask(live.longestTaskMs), "≤ 100 ms"],
        ["page: session opened again → all text shown", fmt.ms(reopened.shownMs)],
        ["page: longest main-thread task while reopening", longTask(reopened.longestTaskMs), "≤ 100 ms"],
      ]);
    }
  } finally {
    await browser.close();
    await stopServe(serve);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The dashboard's address on the Berth the benchmark started (its ACP address less `/acp`, over HTTP). */
function dashboardUrl(serve: ServeProcess): string {
  return serve.acpUrl.replace(/^ws/, "http").replace(/\/acp$/, "");
}

/** Fresh browser contexts (nothing cached) per first load: the page's first task is the bundle's evaluation. */
const FIRST_LOADS = 3;

/**
 * The page's longest task on a first load, in a fresh browser context: the overview, and a session's
 * address (a 2,000-chunk reply, read from the journal), until each shows.
 */
async function firstLoads(browser: Browser, serve: ServeProcess, workDir: string): Promise<void> {
  const side = wsClient(serve);
  await side.initialize();
  const { sessionId } = await side.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
  await side.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `/flood 2000 ${CHUNK_BYTES}` }] });
  side.connection.close();
  const base = dashboardUrl(serve);
  const load = async (hash: string, ready: (page: Page) => Promise<unknown>): Promise<number[]> => {
    const longest: number[] = [];
    for (let i = 0; i < FIRST_LOADS; i++) {
      const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
      const page = await context.newPage();
      await page.addInitScript(LONGTASK_OBSERVER);
      await page.goto(`${base}/?token=${serve.token}${hash}`);
      await ready(page);
      longest.push(await longestTask(page));
      await context.close();
    }
    return longest;
  };
  const hash = `#/sessions/${encodeURIComponent(sessionId)}`;
  const overview = await load("", (page) => page.locator(`section[aria-labelledby="sessions-heading"] a[href="${hash}"]`).first().waitFor());
  const session = await load(hash, (page) => shown(page, 2_000 * CHUNK_BYTES));
  table(`Dashboard first load, fresh browser context (${FIRST_LOADS} loads each)`, [
    ["longest task, overview until its sessions show", overview.map(longTask).join(" / "), "≤ 100 ms"],
    ["longest task, a session's address until its 32 kB reply shows", session.map(longTask).join(" / "), "≤ 100 ms"],
  ]);
}

/** How long the host takes to relay a flood to an ACP client that only counts it (warm agent). */
async function relayTime(serve: ServeProcess, workDir: string, chunks: number): Promise<number> {
  const side = wsClient(serve);
  await side.initialize();
  const { sessionId } = await side.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
  await side.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "/flood 10 16" }] });
  side.reset();
  const start = performance.now();
  await side.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `/flood ${chunks} ${CHUNK_BYTES}` }] });
  const elapsed = performance.now() - start;
  if (side.chunks < chunks) throw new Error(`the relay delivered ${side.chunks} of ${chunks} chunks`);
  side.connection.close();
  return elapsed;
}

interface PageFigures {
  readonly shownMs: number;
  readonly longestTaskMs: number;
}

/** A new session in the page, resumed (agent warm), then the flood typed and sent; until its last row shows all of it. */
async function liveTime(page: Page, serve: ServeProcess, workDir: string, chunks: number): Promise<PageFigures> {
  const base = dashboardUrl(serve);
  const created = await fetch(`${base}/api/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${serve.token}`, "content-type": "application/json", origin: base },
    body: JSON.stringify({ cwd: workDir }),
  });
  const { id } = (await created.json()) as { id: string };
  await page.goto(`${base}/?token=${serve.token}#/sessions/${encodeURIComponent(id)}`);
  await page.getByRole("button", { name: "Resume" }).click();
  await page.getByRole("button", { name: "Resume" }).waitFor({ state: "detached" });
  await send(page, "/flood 10 16");
  await shown(page, 10 * CHUNK_BYTES);
  await page.evaluate(() => {
    (globalThis as unknown as { __longest: number }).__longest = 0;
  });
  const start = await page.evaluate(() => performance.now());
  await send(page, `/flood ${chunks} ${CHUNK_BYTES}`);
  const end = await shown(page, chunks * CHUNK_BYTES);
  return { shownMs: end - start, longestTaskMs: await longestTask(page) };
}

/** The page loaded again (a fresh document): the journal read over REST until the reply shows whole. */
async function reopenTime(page: Page, chunks: number): Promise<PageFigures> {
  await page.reload();
  // The page's clock starts with the navigation: the time shown is from the reload.
  return { shownMs: await shown(page, chunks * CHUNK_BYTES), longestTaskMs: await longestTask(page) };
}

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByLabel("Message to the agent");
  await box.fill(text);
  await box.press("Enter");
}

/** Waits in the page until a message's last row says it holds `chars` characters; returns that moment (page clock). */
async function shown(page: Page, chars: number): Promise<number> {
  const handle = await page.waitForFunction(
    (wanted) => {
      const { document } = globalThis as unknown as { document: { querySelector(selector: string): unknown } };
      return document.querySelector(`.transcript [data-chars="${wanted}"]`) ? performance.now() : 0;
    },
    chars,
    { timeout: 600_000, polling: "raf" },
  );
  return (await handle.jsonValue()) as number;
}

async function longestTask(page: Page): Promise<number> {
  return page.evaluate(() => (globalThis as unknown as { __longest: number }).__longest);
}

/** The Long Tasks API reports tasks of 50 ms and more only. */
function longTask(ms: number): string {
  return ms === 0 ? "none ≥ 50 ms" : fmt.ms(ms);
}
