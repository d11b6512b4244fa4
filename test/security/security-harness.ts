import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { chromium, type Browser } from "playwright-core";
import type { ConfigInput } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/load-config.js";
import { startBerth, type RunningBerth } from "../../src/server/serve.js";
import { waitUntilGone } from "../support/process-table.js";
import { chromiumArgs, chromiumPath } from "../../src/bench/debian-chromium.js";
import { webDir } from "../web/dashboard-harness.js";

export { waitUntil } from "../support/process-table.js";

const cleanups: Array<() => Promise<void> | void> = [];

/** For `afterEach`/`afterAll`: stops servers and browsers, checks agents are gone, removes temp dirs, in reverse order. */
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface SecureBerth {
  readonly berth: RunningBerth;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  readonly dataDir: string;
  readonly workDir: string;
  /** Every log line the host wrote, parsed. */
  readonly logs: Array<{ level: number; msg: string; [key: string]: unknown }>;
}

/** A real Berth on 127.0.0.1 (any free port) with the built dashboard, its logs captured. */
export async function startSecureBerth(config: ConfigInput = {}): Promise<SecureBerth> {
  const dataDir = tempDir("berth-sec-data-");
  const workDir = tempDir("berth-sec-work-");
  const logs: SecureBerth["logs"] = [];
  const log = pino({ level: "debug" }, { write: (line: string) => void logs.push(JSON.parse(line) as SecureBerth["logs"][number]) });
  const berth = await startBerth({ config: parseConfig(config), dataDir, listenHost: "127.0.0.1", port: 0, log, webDir });
  const pids = new Set<number>();
  berth.host.onRecord(({ record }) => {
    if (record.kind === "child_acquired") pids.add(record.pid);
  });
  cleanups.push(async () => {
    await berth.shutdown();
    const left = await waitUntilGone([...pids]);
    if (left.length > 0) throw new Error(`agent processes left running: ${left.join(", ")}`);
  });
  return { berth, url: berth.server.url, port: berth.server.port, token: berth.token, dataDir, workDir, logs };
}

interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/** Another local web site (a dev server on another port): it records every request and serves `pages[path]` as HTML. */
export interface OtherSite {
  readonly url: string;
  readonly port: number;
  readonly requests: SeenRequest[];
  readonly pages: Map<string, string>;
}

export async function startOtherSite(): Promise<OtherSite> {
  const requests: SeenRequest[] = [];
  const pages = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    const page = pages.get(new URL(req.url ?? "/", "http://x").pathname);
    res.writeHead(page === undefined ? 404 : 200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(page ?? "<!doctype html><title>nothing here</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, port, requests, pages };
}

/** The name a rebinding attacker's page uses: the browser resolves it to 127.0.0.1, as DNS rebinding would. */
export const REBOUND_NAME = "rebind.attacker.test";

/** Debian's Chromium, headless; `REBOUND_NAME` resolves to 127.0.0.1 in it. */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [...chromiumArgs, `--host-resolver-rules=MAP ${REBOUND_NAME} 127.0.0.1`],
  });
  cleanups.push(() => browser.close());
  return browser;
}
