// Issue 11, item 8: "remember this device" without handing other local web servers a credential.
// Real Berth, real Chromium, a real second web server on another loopback port.
import type { BrowserContext, Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, launchChromium, startOtherSite, startSecureBerth, type SecureBerth } from "./security-harness.js";

afterEach(cleanUp);

const YEAR_S = 365 * 24 * 3600;

async function openDashboard(berth: SecureBerth, context: BrowserContext, path = `/?token=${berth.token}`): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${berth.url}${path}`);
  return page;
}

async function live(page: Page): Promise<void> {
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
  await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
}

async function rememberThisDevice(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Settings" }).click();
  const settings = page.getByRole("dialog", { name: "Settings" });
  await settings.getByRole("button", { name: "Remember this device" }).click();
  await settings.getByText("Remembered: this browser opens the dashboard without the link").waitFor();
  await settings.getByRole("button", { name: "Done" }).click();
}

/** A Berth, and a browser that opened its link and remembered the device. */
async function rememberedDevice() {
  const berth = await startSecureBerth();
  const browser = await launchChromium();
  const context = await browser.newContext();
  const page = await openDashboard(berth, context);
  await live(page);
  await rememberThisDevice(page);
  return { berth, context, page };
}

describe("remember this device", () => {
  it("sets an HttpOnly, SameSite=Strict, year-long cookie; another local server never gets anything that lets it in; a new tab opens without the link", async () => {
    const berth = await startSecureBerth();
    const other = await startOtherSite();
    const browser = await launchChromium();
    const context = await browser.newContext();
    const page = await openDashboard(berth, context);
    await live(page);
    expect(await context.cookies()).toEqual([]);

    await rememberThisDevice(page);
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    const [cookie] = cookies;
    expect(cookie).toMatchObject({
      name: `berth-login-${berth.port}`,
      domain: "127.0.0.1",
      path: "/",
      httpOnly: true,
      sameSite: "Strict",
      secure: false,
    });
    expect(cookie!.expires - Date.now() / 1000).toBeGreaterThan(YEAR_S - 3600);
    expect(cookie!.expires - Date.now() / 1000).toBeLessThanOrEqual(YEAR_S);
    // Script cannot read the cookie; the page keeps its own half in its origin's storage.
    expect(await page.evaluate("document.cookie")).toBe("");
    const pageHalf = (await page.evaluate("localStorage.getItem('berth.login')")) as string;
    expect(pageHalf).toMatch(/^[\w-]{43}$/);

    // The same browser visits another web server of this machine, at both loopback names.
    const visit = await context.newPage();
    await visit.goto(`${other.url}/visit`);
    await visit.goto(`http://localhost:${other.port}/visit-by-name`);
    expect(other.requests.map((r) => r.url)).toEqual(expect.arrayContaining(["/visit", "/visit-by-name"]));
    for (const seen of other.requests) {
      const text = JSON.stringify(seen);
      expect(text).not.toContain(berth.token);
      expect(text).not.toContain(pageHalf);
      // Browsers send cookies to every port of a host: whatever it got, it gets nothing in with it.
      if (seen.headers.cookie !== undefined) {
        const replayed = await fetch(`${berth.url}/api/sessions`, { headers: { cookie: seen.headers.cookie } });
        expect(replayed.status, `${seen.url}'s cookie replayed to Berth`).toBe(401);
      }
    }

    // A new tab (no token: the link's token lives in its own tab only) opens the dashboard, remembered.
    const later = await openDashboard(berth, context, "/");
    await live(later);
    expect(await later.evaluate("sessionStorage.getItem('berth.token')")).toBeNull();
    await later.getByRole("button", { name: "Settings" }).click();
    const devices = later.getByRole("dialog", { name: "Settings" }).getByRole("listitem");
    await expect.poll(() => devices.count()).toBe(1);
    expect(await devices.first().textContent()).toMatch(/^Chrome on Linuxthis device/);
    await later.getByRole("button", { name: "Done" }).click();
    // Its chat works too: ACP over WebSocket, let in by the cookie and the page's half.
    const session = await berth.berth.host.createSession({ cwd: berth.workDir });
    await later.goto(`${berth.url}/#/sessions/${session.id}`);
    // The page reads the session over REST; Resume holds it over ACP.
    await later.getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => berth.berth.host.getSession(session.id)?.holders, { timeout: 15_000, interval: 50 }).toBe(1);
    await later.getByRole("group", { name: "The agent's settings for this session" }).waitFor();
  });

  it("stays remembered when a page on another port sets a cookie of the same name for Path=/api", async () => {
    const { berth, context } = await rememberedDevice();
    const other = await startOtherSite();
    // Cookies ignore ports: this page's cookie is sent to Berth too, and before the device's own (its path is longer).
    other.pages.set("/shadow", `<!doctype html><script>document.cookie = "berth-login-${berth.port}=shadow.x; Path=/api; Max-Age=3600";</script>`);
    const visit = await context.newPage();
    await visit.goto(`${other.url}/shadow`);
    await expect.poll(async () => (await context.cookies()).map((cookie) => cookie.path).sort()).toEqual(["/", "/api"]);

    const later = await openDashboard(berth, context, "/");
    await live(later);
    const own = (await context.cookies()).find((cookie) => cookie.path === "/");
    expect(own).toMatchObject({ name: `berth-login-${berth.port}`, httpOnly: true });
  });

  it("opens as the remembered device in a tab whose own token is refused (an old link, a token rotated since)", async () => {
    const { berth, context } = await rememberedDevice();
    const stale = await openDashboard(berth, context, "/?token=an-old-token-from-before-it-rotated");
    await live(stale);
    expect(await stale.evaluate("sessionStorage.getItem('berth.token')")).toBeNull();
    expect(await stale.evaluate("localStorage.getItem('berth.login')")).not.toBeNull();
  });

  it("is refused, and says so, once the token rotates; the refused cookie is dropped", async () => {
    const { berth, context } = await rememberedDevice();
    const remembered = await openDashboard(berth, context, "/");
    await live(remembered);

    const rotated = await fetch(`${berth.url}/api/token/rotate`, {
      method: "POST",
      headers: { authorization: `Bearer ${berth.token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(rotated.status).toBe(200);
    // The open page's event stream was ended; reconnecting, it is refused and says why.
    await remembered.getByRole("heading", { name: "Open the link Berth printed" }).waitFor();
    await remembered.getByText("This device was remembered, but its login no longer works").waitFor();
    expect(await remembered.evaluate("localStorage.getItem('berth.login')")).toBeNull();
    await expect.poll(async () => (await context.cookies()).length).toBe(0);
    expect(await remembered.content()).not.toContain(berth.berth.token);
  });

  it("is forgotten from its own settings: the cookie and the page's half are gone", async () => {
    const { berth, context, page } = await rememberedDevice();
    await page.getByRole("button", { name: "Settings" }).click();
    const settings = page.getByRole("dialog", { name: "Settings" });
    await settings.getByRole("button", { name: "Forget this device" }).click();
    await settings.getByRole("button", { name: "Remember this device" }).waitFor();
    await settings.getByText("None: every device needs the link.").waitFor();
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate("localStorage.getItem('berth.login')")).toBeNull();
    expect(berth.berth.access.logins.list(berth.berth.token)).toEqual([]);
  });
});

describe("a wrong or stale link, opened in a browser", () => {
  it("shows a page that says what to do: the dashboard for the page's address, Berth's own page for an API address", async () => {
    const berth = await startSecureBerth();
    const browser = await launchChromium();
    const context = await browser.newContext();
    const page = await openDashboard(berth, context, "/?token=a-stale-token-0000000000000000");
    await page.getByRole("heading", { name: "Open the link Berth printed" }).waitFor();
    await page.getByText("The token in the link this tab was opened with was not accepted").waitFor();

    const api = await context.newPage();
    const response = await api.goto(`${berth.url}/api/sessions?token=a-stale-token-0000000000000000`);
    expect(response?.status()).toBe(401);
    await api.getByRole("heading", { name: "This link has no valid access token" }).waitFor();
    expect(await api.content()).not.toContain("a-stale-token");
    expect(await api.content()).not.toContain('{"error"');
  });
});

describe("the installable web app", () => {
  it("has a manifest Chromium reads, with icons it can install from", async () => {
    const berth = await startSecureBerth();
    const browser = await launchChromium();
    const context = await browser.newContext();
    const page = await openDashboard(berth, context);
    await live(page);
    const cdp = await context.newCDPSession(page);
    const manifest = (await cdp.send("Page.getAppManifest")) as { url: string; errors: unknown[]; parsed?: { name?: string; display?: string } };
    expect(manifest.url).toBe(`${berth.url}/manifest.webmanifest`);
    expect(manifest.errors).toEqual([]);
    const { installabilityErrors } = (await cdp.send("Page.getInstallabilityErrors")) as { installabilityErrors: { errorId: string }[] };
    // A Playwright context is an incognito profile, where Chromium installs nothing; that is the only objection it may have.
    expect(installabilityErrors.map((error) => error.errorId).filter((id) => id !== "in-incognito")).toEqual([]);
  });
});
