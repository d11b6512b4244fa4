// Takes the dashboard's screenshots in docs/screenshots/ from a real Berth (the demo agent) in Debian's
// Chromium: `npm run build && node scripts/docs-screenshots.mjs`. The PNGs are committed; run this
// again when the dashboard's look changes. Each view at desktop (1366×900) and phone (390×844) width,
// in the light and the dark scheme: a long conversation (Markdown, a diff, a tool call's output, the
// agent's mode and model pickers), the session list (each session's state), the search and filters,
// the Host page (agent processes, locations, lifecycle) and the settings with a remembered device.
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
const widths = {
  desktop: { viewport: { width: 1366, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
};

const markdown = ["**Build report**: all 42 tests passed; see `npm test`.", "```ts", "const answer: number = 42;", "```"].join("\n");

const dataDir = mkdtempSync(join(tmpdir(), "berth-shots-data-"));
// Short paths: they are shown in the conversation.
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "w-")));
const appDir = join(workDir, "app");
const docsDir = join(workDir, "docs");
mkdirSync(appDir);
mkdirSync(docsDir);
mkdirSync(outDir, { recursive: true });
// Set inside the try: a failed start or launch still stops what did start and removes the temp dirs.
let berth;
let browser;
try {
  berth = await startBerth({
    config: parseConfig({ releaseGrace: "10m" }),
    dataDir,
    listenHost: "127.0.0.1",
    port: 0,
    log: silentLogger(),
    webDir,
  });
  const { host } = berth;
  browser = await chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs] });
  // The sessions the search and filters find; the conversation's is the first.
  const conversation = await host.createSession({ cwd: appDir });
  const others = [
    { cwd: appDir, title: "Fix the login redirect", prompt: "Why does the login page redirect twice?" },
    { cwd: appDir, title: "Login page styles", prompt: "Make the login form fit a phone" },
    { cwd: docsDir, title: "Release notes for v1.4", prompt: "Draft the release notes" },
  ];
  for (const other of others) {
    const { id } = await host.createSession({ cwd: other.cwd });
    await host.prompt(id, [{ type: "text", text: other.prompt }]);
    host.renameSession(id, other.title);
  }
  // What the list's chips say: a turn working, one that failed (the conversation's is idle).
  const working = await host.createSession({ cwd: docsDir });
  host.renameSession(working.id, "Run the integration suite");
  void host.prompt(working.id, [{ type: "text", text: "/sleep 30m" }]);
  const failed = await host.createSession({ cwd: appDir });
  await host.prompt(failed.id, [{ type: "text", text: "/fail -32000 the disk is full" }]).catch(() => undefined);
  host.renameSession(failed.id, "Migrate the orders table");
  const prompt = (text) => host.prompt(conversation.id, [{ type: "text", text }]);
  for (let i = 1; i <= 6; i++) await prompt(`Step ${i} of the checkout refactor: ${"move the cart logic into its own module ".repeat(3)}`);
  await prompt(markdown);
  writeFileSync(join(appDir, "notes.txt"), "alpha\nbeta\n");
  await prompt(`/edit ${join(appDir, "notes.txt")} alpha\nBETA`);
  await prompt("/run printf 'compiling...\\nall 42 tests passed\\n'");
  host.renameSession(conversation.id, "Checkout refactor");

  for (const scheme of ["light", "dark"]) {
    for (const [width, options] of Object.entries(widths)) {
      const context = await browser.newContext({ ...options, colorScheme: scheme });
      const page = await context.newPage();
      const shot = async (name) => {
        await page.evaluate("document.activeElement?.blur()");
        await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
        const file = join(outDir, `${name}-${width}-${scheme}.png`);
        // CSS pixels: the phone's shots stay small.
        writeFileSync(file, await page.screenshot({ scale: "css" }));
        console.log(file);
      };

      // The conversation, held (as after a message): its agent's pickers in the header, its end in view.
      await page.goto(`${berth.server.url}/?token=${berth.token}#/sessions/${conversation.id}`);
      // The offer to remember this device, shown on the link's visit, is not what these pictures are about.
      await page.getByRole("region", { name: "Remember this device" }).getByRole("button", { name: "Not now" }).click();
      await page.getByRole("button", { name: "Resume" }).click();
      // A phone folds the header's details (the pickers among them): unfolded, as the picture shows them.
      if (width === "phone") await page.getByRole("button", { name: "Details" }).click();
      await page.getByText("open in 1 client").waitFor();
      await page.getByRole("group", { name: "The agent's settings for this session" }).waitFor();
      await page
        .getByRole("log", { name: "Conversation" })
        .getByRole("article", { name: /Tool call: printf/ })
        .locator(".output")
        .waitFor();
      await page.locator(".hljs-keyword").first().waitFor();
      await shot("conversation");

      // The Host page: each session's agent process, the conversation's location, the lifecycle records.
      await page.goto(`${berth.server.url}/#/host`);
      await page.locator(`tr[data-session-id="${conversation.id}"] .pid`).waitFor();
      await page.locator("li.location").first().waitFor();
      await page
        .getByRole("list", { name: /lifecycle/i })
        .locator("li")
        .first()
        .waitFor();
      await shot("host");

      // The list, no conversation open: on a phone, its own screen.
      await page.goto(`${berth.server.url}/#/sessions`);
      await page.locator("li.session-row .chip", { hasText: "working" }).waitFor();
      await page.locator("li.session-row .chip", { hasText: "failed" }).waitFor();
      await shot("list");

      // The list searched and filtered.
      await page.getByRole("searchbox", { name: "Search session titles" }).fill("login");
      await page.getByLabel("Folder").selectOption(appDir);
      // The two login sessions in the app's folder, the others filtered out.
      await page.waitForFunction(() => document.querySelectorAll("li.session-row").length === 2);
      await page.getByRole("searchbox", { name: "Search session titles" }).scrollIntoViewIfNeeded();
      await shot("find");

      // Settings, this device remembered.
      await page.getByRole("searchbox", { name: "Search session titles" }).fill("");
      await page.getByRole("button", { name: "Settings" }).click();
      const settings = page.getByRole("dialog", { name: "Settings" });
      await settings.getByRole("button", { name: "Remember this device" }).click();
      await settings.getByRole("button", { name: "Forget this device" }).waitFor();
      await shot("settings");
      await context.close();
    }
  }
} finally {
  await browser?.close();
  await berth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
}
