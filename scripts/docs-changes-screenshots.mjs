// Takes the Changes view's screenshots in docs/screenshots/ from a real Berth (the demo agent) and a real git
// repository in Debian's Chromium: `npm run build && node scripts/docs-changes-screenshots.mjs`. A session in a
// worktree of its own changed two files; one of its lines has a comment, another a comment box open. At desktop
// (1366×900) and phone (390×844) width, in the light and the dark scheme. Then the session list grouped by repository:
// that session ready to review, another of the same repository whose base moved on, a plain session of another folder.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { chromiumArgs, chromiumPath } from "../dist/bench/debian-chromium.js";
import { parseConfig } from "../dist/config/load-config.js";
import { silentLogger } from "../dist/host/logger.js";
import { startBerth } from "../dist/server/serve.js";

const outDir = fileURLToPath(new URL("../docs/screenshots/", import.meta.url));
const webDir = fileURLToPath(new URL("../dist/web/", import.meta.url));
const widths = {
  desktop: { viewport: { width: 1366, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
};

const base = {
  "src/price.ts": ["export function price(cents: number): string {", "  return String(cents / 100);", "}", ""].join("\n"),
  "src/cart.ts": [
    "import { price } from './price';",
    "",
    "export function total(items: number[]): string {",
    "  return price(items.reduce((a, b) => a + b, 0));",
    "}",
    "",
  ].join("\n"),
  "README.md": "# Shop\n",
};
const changed = {
  "src/price.ts": [
    "const euros = new Intl.NumberFormat('en-IE', { style: 'currency', currency: 'EUR' });",
    "",
    "export function price(cents: number): string {",
    "  return euros.format(cents / 100);",
    "}",
    "",
  ].join("\n"),
  "src/cart.ts": [
    "import { price } from './price';",
    "",
    "export function total(items: readonly number[]): string {",
    "  return price(items.reduce((sum, cents) => sum + cents, 0));",
    "}",
    "",
  ].join("\n"),
};

const dataDir = mkdtempSync(join(tmpdir(), "berth-shots-data-"));
// Short paths: they are shown in the view.
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "w-")));
const repo = join(workDir, "shop");
const git = (...args) => execFileSync("git", args, { cwd: repo, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" } });
mkdirSync(repo);
git("init", "--quiet", "--initial-branch=main");
git("config", "user.name", "Berth Docs");
git("config", "user.email", "docs@berth.invalid");
for (const [path, text] of Object.entries(base)) {
  mkdirSync(dirname(join(repo, path)), { recursive: true });
  writeFileSync(join(repo, path), text);
}
git("add", "--all");
git("commit", "--quiet", "-m", "Shop");
mkdirSync(outDir, { recursive: true });
// Set inside the try: a failed start or launch still stops what did start and removes the temp dirs.
let berth;
let browser;
try {
  berth = await startBerth({ config: parseConfig({ releaseGrace: "10m" }), dataDir, listenHost: "127.0.0.1", port: 0, log: silentLogger(), webDir });
  const { host } = berth;
  browser = await chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs] });
  const session = await host.createSession({ cwd: repo, worktree: {}, title: "Show prices in euros" });
  for (const [path, text] of Object.entries(changed))
    await host.prompt(session.id, [{ type: "text", text: `/write ${join(session.cwd, path)} ${text}` }]);
  await host.addReviewComment(session.id, {
    path: "src/price.ts",
    line: 1,
    side: "new",
    body: "Take the locale from the user's settings, not a fixed en-IE.",
  });

  for (const scheme of ["light", "dark"]) {
    for (const [width, options] of Object.entries(widths)) {
      const context = await browser.newContext({ ...options, colorScheme: scheme });
      const page = await context.newPage();
      await page.goto(`${berth.server.url}/?token=${berth.token}#/sessions/${session.id}/changes/${encodeURIComponent("src/price.ts")}`);
      // The offer to remember this device, shown on the link's visit, is not what these pictures are about.
      await page.getByRole("region", { name: "Remember this device" }).getByRole("button", { name: "Not now" }).click();
      await page.getByRole("article", { name: "Comment on src/price.ts:1" }).waitFor();
      await page.getByRole("button", { name: "Comment on src/price.ts:4" }).click();
      await page.getByRole("textbox", { name: "Comment on src/price.ts:4" }).fill("Round half-cents the way the tills do.");
      // From the page's top: the session, its branch and Land, then the file.
      await page.evaluate("window.scrollTo(0, 0)");
      await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
      const file = join(outDir, `changes-${width}-${scheme}.png`);
      // CSS pixels: the phone's shots stay small.
      writeFileSync(file, await page.screenshot({ scale: "css" }));
      console.log(file);
      await context.close();
    }
  }

  const blog = join(workDir, "blog");
  mkdirSync(blog);
  await host.createSession({ cwd: blog, title: "Draft the launch post" });
  await host.createSession({ cwd: repo, worktree: {}, title: "Fix the cart total" });
  writeFileSync(join(repo, "README.md"), "# Shop\n\nPrices in cents.\n");
  git("commit", "--quiet", "-am", "README: prices in cents");
  const context = await browser.newContext({ ...widths.desktop, colorScheme: "light" });
  const page = await context.newPage();
  await page.goto(`${berth.server.url}/?token=${berth.token}#/sessions`);
  await page.getByRole("region", { name: "Remember this device" }).getByRole("button", { name: "Not now" }).click();
  await page.locator(".chip", { hasText: "ready to review" }).waitFor();
  await page.getByText("0 commits ahead of main, 1 behind").first().waitFor();
  const file = join(outDir, "worktree-list-desktop-light.png");
  writeFileSync(file, await page.screenshot({ scale: "css" }));
  console.log(file);
  await context.close();
} finally {
  await browser?.close();
  await berth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
}
