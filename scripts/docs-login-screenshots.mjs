// Takes the screenshots of the dashboard's login terminal in docs/screenshots/ from a real Berth with
// Claude Code's ACP adapter (the dev dependency) as agent `claude`, in Debian's Chromium: `npm run build
// && node scripts/docs-login-screenshots.mjs`. Offline (a fresh HOME, no key, no traffic) the login goes no
// further than Claude Code's first screen, which is what is shown. Desktop (1366×900) and phone (390×844)
// width, light and dark; each shot starts the login afresh, at that page's size, and stops it after.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { chromiumArgs, chromiumPath } from "../dist/bench/debian-chromium.js";
import { parseConfig } from "../dist/config/load-config.js";
import { silentLogger } from "../dist/host/logger.js";
import { startBerth } from "../dist/server/serve.js";

const outDir = fileURLToPath(new URL("../docs/screenshots/", import.meta.url));
const webDir = fileURLToPath(new URL("../dist/web/", import.meta.url));
const claudeAcp = fileURLToPath(new URL("../node_modules/@zed-industries/claude-agent-acp/dist/index.js", import.meta.url));
const widths = {
  desktop: { viewport: { width: 1366, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
};

const dataDir = mkdtempSync(join(tmpdir(), "berth-shots-data-"));
// Claude Code's own home: nothing of this machine's configuration or account is shown.
const home = realpathSync(mkdtempSync(join(tmpdir(), "berth-shots-home-")));
const xdg = {
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_DATA_HOME: join(home, ".local", "share"),
  XDG_CACHE_HOME: join(home, ".cache"),
  XDG_STATE_HOME: join(home, ".local", "state"),
};
for (const dir of [...Object.values(xdg), join(home, "tmp")]) mkdirSync(dir, { recursive: true, mode: 0o700 });
const env = {
  HOME: home,
  ...xdg,
  CLAUDE_CONFIG_DIR: join(home, ".claude"),
  CLAUDE_CODE_TMPDIR: join(home, "tmp"),
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  DO_NOT_TRACK: "1",
  IS_SANDBOX: "1",
};
mkdirSync(outDir, { recursive: true });
let berth;
let browser;
try {
  berth = await startBerth({
    config: parseConfig({ agents: { claude: { command: process.execPath, args: [claudeAcp], env } } }),
    dataDir,
    listenHost: "127.0.0.1",
    port: 0,
    log: silentLogger(),
    webDir,
  });
  const api = (path, init = {}) => fetch(`${berth.server.url}${path}`, { ...init, headers: { authorization: `Bearer ${berth.token}` } });
  browser = await chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs] });
  for (const scheme of ["light", "dark"]) {
    for (const [width, options] of Object.entries(widths)) {
      const context = await browser.newContext({ ...options, colorScheme: scheme });
      const page = await context.newPage();
      await page.goto(`${berth.server.url}/?token=${berth.token}#/agents/claude/login/claude-login/terminal`);
      // The offer to remember this device, shown on the link's visit, is not what these pictures are about.
      await page.getByRole("region", { name: "Remember this device" }).getByRole("button", { name: "Not now" }).click();
      const panel = page.getByRole("region", { name: "Log in to claude" });
      await panel.getByRole("status").filter({ hasText: "Running on the host" }).waitFor({ timeout: 30_000 });
      // Its words are apart by cursor moves, not spaces, in the terminal's rows.
      await page.waitForFunction(() => /Welcome\s*to\s*Claude\s*Code/.test(document.querySelector(".xterm-rows")?.textContent ?? ""), null, {
        timeout: 60_000,
      });
      // The first screen drawn whole (its art and its prompt): the terminal quiet for a second.
      await page.waitForFunction(
        () =>
          new Promise((resolve) => {
            const rows = document.querySelector(".xterm-rows");
            const before = rows.innerHTML;
            setTimeout(() => resolve(rows.innerHTML === before), 1000);
          }),
        null,
        { polling: 100, timeout: 30_000 },
      );
      await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
      const file = join(outDir, `login-terminal-${width}-${scheme}.png`);
      // CSS pixels: the phone's shots stay small.
      writeFileSync(file, await page.screenshot({ scale: "css" }));
      console.log(file);
      await context.close();
      await api("/api/agents/claude/logins/claude-login", { method: "DELETE" });
      while (((await (await api("/api/terminal-logins")).json()).logins ?? []).length > 0) await new Promise((r) => setTimeout(r, 100));
    }
  }
} finally {
  await browser?.close();
  await berth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
