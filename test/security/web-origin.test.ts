// Issue 9, items 1 and 2: other local web pages (another port is another site) get no credential
// and change nothing. Real Berth, real Chromium, a real second web server on another loopback port.
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { upgradeOutcome } from "../server/server-harness.js";
import { cleanUp, launchChromium, REBOUND_NAME, startOtherSite, startSecureBerth, waitUntil, type SecureBerth } from "./security-harness.js";

afterEach(cleanUp);

/** Opens the dashboard from the link with the token, as a person would, and waits until it shows the sessions. */
async function openDashboard(berth: SecureBerth, browser: Awaited<ReturnType<typeof launchChromium>>) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${berth.url}/?token=${berth.token}`);
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
  await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
  return { context, page };
}

/** A raw HTTP request with any Host header (fetch does not let a test set it). */
function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

describe("other local web pages", () => {
  it("item 1: after the dashboard was opened in a browser, another local server receives neither the token nor any cookie", async () => {
    const berth = await startSecureBerth();
    const other = await startOtherSite();
    const browser = await launchChromium();
    const { context, page } = await openDashboard(berth, browser);
    // The dashboard works on the token it keeps in the page; the browser holds no cookie at all.
    expect(await context.cookies()).toEqual([]);
    // The address keeps no token: the root, or the list the root opens with no conversation to show.
    expect([`${berth.url}/`, `${berth.url}/#/sessions`]).toContain(page.url());

    // The same browser visits another web server of this machine, at both loopback names; cookies ignore ports.
    const visit = await context.newPage();
    await visit.goto(`${other.url}/visit`);
    await visit.goto(`http://localhost:${other.port}/visit-by-name`);
    // And the dashboard's own page reaches for it too (its Content-Security-Policy refuses the request).
    const fromDashboard = await page.evaluate(
      (url) =>
        fetch(`${url}/from-the-dashboard`, { mode: "no-cors", credentials: "include" }).then(
          () => "sent",
          () => "blocked",
        ),
      other.url,
    );
    expect(fromDashboard).toBe("blocked");

    expect(other.requests.map((r) => r.url)).toEqual(expect.arrayContaining(["/visit", "/visit-by-name"]));
    for (const seen of other.requests) {
      expect(seen.headers.cookie, `${seen.url} came with a cookie`).toBeUndefined();
      expect(JSON.stringify(seen)).not.toContain(berth.token);
    }
  });

  it("item 2: a page on another local port cannot change anything: no-cors text/plain POSTs, WebSockets and reads are refused", async () => {
    const berth = await startSecureBerth();
    const other = await startOtherSite();
    const browser = await launchChromium();
    const { context } = await openDashboard(berth, browser);
    const sessionBody = JSON.stringify({ cwd: berth.workDir });
    // The attacker's page; it is even given the token, as if it had leaked, to show the origin checks hold on their own.
    other.pages.set(
      "/attack",
      `<!doctype html><script>
      window.outcome = (async () => {
        const berth = ${JSON.stringify(berth.url)};
        const token = ${JSON.stringify(berth.token)};
        const post = (path, contentType) => fetch(berth + path, { method: "POST", mode: "no-cors", credentials: "include", headers: { "content-type": contentType }, body: ${JSON.stringify(sessionBody)} }).then((r) => r.type, (e) => "error");
        return {
          noCors: await post("/api/sessions", "text/plain"),
          noCorsWithToken: await post("/api/sessions?token=" + token, "text/plain"),
          acpWithToken: await post("/acp?token=" + token, "text/plain"),
          read: await fetch(berth + "/api/sessions?token=" + token).then((r) => "read " + r.status, () => "unreadable"),
          webSocket: await new Promise((resolve) => {
            const ws = new WebSocket(berth.replace("http", "ws") + "/acp?token=" + token);
            ws.onopen = () => { ws.close(); resolve("open"); };
            ws.onerror = () => resolve("refused");
          }),
        };
      })();
      </script>`,
    );
    const attack = await context.newPage();
    await attack.goto(`${other.url}/attack`);
    const outcome = await attack.evaluate("window.outcome");
    // The browser sent the no-cors requests; Berth refused each, and its Cross-Origin-Resource-Policy keeps
    // even the opaque answer from the page (the fetch fails).
    expect(outcome).toEqual({ noCors: "error", noCorsWithToken: "error", acpWithToken: "error", read: "unreadable", webSocket: "refused" });
    await waitUntil(
      () => berth.logs.filter((l) => l.msg === "request from a foreign origin refused").length >= 5,
      "Berth refused every request of the page",
    );
    expect(berth.berth.host.listSessions()).toEqual([]);

    // Outside a browser the same rules, one by one: a foreign Origin, a cross-site fetch, a body that is not JSON.
    const json = { authorization: `Bearer ${berth.token}`, "content-type": "application/json" };
    const post = (headers: Record<string, string>) => rawRequest(`${berth.url}/api/sessions`, { method: "POST", headers, body: sessionBody });
    expect(await post({ ...json, origin: other.url })).toMatchObject({ status: 403, body: expect.stringContaining("forbidden_origin") });
    expect(await post({ ...json, "sec-fetch-site": "same-site" })).toMatchObject({ status: 403, body: expect.stringContaining("forbidden_site") });
    expect(await post({ ...json, "sec-fetch-site": "cross-site" })).toMatchObject({ status: 403 });
    expect(await post({ ...json, "content-type": "text/plain" })).toMatchObject({
      status: 415,
      body: expect.stringContaining("unsupported_media_type"),
    });
    expect(await post({ ...json, "content-type": "application/x-www-form-urlencoded" })).toMatchObject({ status: 415 });
    expect(await upgradeOutcome(`${berth.url.replace("http", "ws")}/acp?token=${berth.token}`, { origin: other.url })).toBe(403);
    expect(berth.berth.host.listSessions()).toEqual([]);
    // Berth's own page, and clients that are no browser, still may.
    expect(await post({ ...json, origin: berth.url, "sec-fetch-site": "same-origin" })).toMatchObject({ status: 201 });
    expect(await post(json)).toMatchObject({ status: 201 });
  });

  it("item 2: a request for a foreign Host name (DNS rebinding) is refused, from a real browser and from anywhere", async () => {
    const berth = await startSecureBerth();
    const browser = await launchChromium();
    // In this browser the attacker's name resolves to 127.0.0.1, as it does once rebound.
    const context = await browser.newContext();
    const page = await context.newPage();
    const rebound = `http://${REBOUND_NAME}:${berth.port}`;
    const response = await page.goto(`${rebound}/?token=${berth.token}`);
    expect(response?.status()).toBe(403);
    expect(await page.textContent("body")).toContain("forbidden_host");
    const fromRebound = await page.evaluate(
      ({ token, cwd }) =>
        fetch("/api/sessions", {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ cwd }),
        }).then((r) => r.status),
      { token: berth.token, cwd: berth.workDir },
    );
    expect(fromRebound).toBe(403);

    const bearer = { authorization: `Bearer ${berth.token}` };
    for (const path of ["/", "/healthz", "/api/agents", "/metrics", "/assets/none.js"]) {
      expect(await rawRequest(`${berth.url}${path}`, { headers: { ...bearer, host: `evil.example:${berth.port}` } }), path).toMatchObject({
        status: 403,
      });
    }
    expect(await upgradeOutcome(`${berth.url.replace("http", "ws")}/acp`, { ...bearer, host: `evil.example:${berth.port}` })).toBe(403);
    expect(berth.berth.host.listSessions()).toEqual([]);
    // This machine's own names pass.
    for (const host of [`127.0.0.1:${berth.port}`, `localhost:${berth.port}`, `[::1]:${berth.port}`]) {
      expect(await rawRequest(`${berth.url}/api/agents`, { headers: { ...bearer, host } }), host).toMatchObject({ status: 200 });
    }
  });

  it("behind a reverse proxy: the names in server.allowedHosts are let in, as Host and as the page's origin; any other name still is not", async () => {
    const berth = await startSecureBerth({ server: { allowedHosts: ["berth.example.internal"] } });
    const bearer = { authorization: `Bearer ${berth.token}` };
    const json = { ...bearer, "content-type": "application/json" };
    const body = JSON.stringify({ cwd: berth.workDir });
    // The proxy passes the Host on: the page, the API, a state change from the proxied page, the ACP upgrade.
    const proxied = { host: "berth.example.internal" };
    expect(await rawRequest(`${berth.url}/`, { headers: proxied })).toMatchObject({ status: 200 });
    expect(await rawRequest(`${berth.url}/api/agents`, { headers: { ...bearer, ...proxied } })).toMatchObject({ status: 200 });
    const page = { origin: "https://berth.example.internal", "sec-fetch-site": "same-origin" };
    expect(await rawRequest(`${berth.url}/api/sessions`, { method: "POST", headers: { ...json, ...proxied, ...page }, body })).toMatchObject({
      status: 201,
    });
    expect(await upgradeOutcome(`${berth.url.replace("http", "ws")}/acp`, { ...bearer, ...proxied, origin: page.origin })).toBe("open");
    // The proxy rewrites Host to Berth's address: the page's origin is still its own.
    expect(await rawRequest(`${berth.url}/api/sessions`, { method: "POST", headers: { ...json, ...page }, body })).toMatchObject({ status: 201 });

    // Any other name, and another port of the proxy's name, are refused as before.
    expect(await rawRequest(`${berth.url}/api/agents`, { headers: { ...bearer, host: "evil.example" } })).toMatchObject({
      status: 403,
      body: expect.stringContaining("forbidden_host"),
    });
    expect(await upgradeOutcome(`${berth.url.replace("http", "ws")}/acp`, { ...bearer, host: "evil.example" })).toBe(403);
    for (const origin of ["https://evil.example", "https://berth.example.internal:3000"]) {
      expect(await rawRequest(`${berth.url}/api/sessions`, { method: "POST", headers: { ...json, ...proxied, origin }, body }), origin).toMatchObject(
        {
          status: 403,
          body: expect.stringContaining("forbidden_origin"),
        },
      );
    }
    // Berth's own host and port under https (another server's page there, a TLS proxy nobody configured) is another origin.
    const own = `https://${new URL(berth.url).host}`;
    expect(await rawRequest(`${berth.url}/api/sessions`, { method: "POST", headers: { ...json, origin: own }, body })).toMatchObject({
      status: 403,
      body: expect.stringContaining("forbidden_origin"),
    });
    expect(await upgradeOutcome(`${berth.url.replace("http", "ws")}/acp`, { ...bearer, origin: own })).toBe(403);
    expect(berth.berth.host.listSessions()).toHaveLength(2);
  });
});
