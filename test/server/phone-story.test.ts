import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { get, type IncomingHttpHeaders } from "node:http";
import type { NetworkInterfaceInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startupText } from "../../src/cli/startup-text.js";
import { DeviceLogins } from "../../src/server/device-logins.js";
import { lanAddresses } from "../../src/server/lan-addresses.js";
import { loginCookieName } from "../../src/server/login-cookie.js";
import { cliMain, serveOnTempDir } from "./serve-process.js";
import { cleanUp, startFixture, tempDir, waitUntil, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

const run = promisify(execFile);

/** What `os.networkInterfaces()` reports on a laptop on Wi-Fi, with Docker and a VPN. */
const laptop = (): NodeJS.Dict<NetworkInterfaceInfo[]> => {
  const v4 = (address: string, internal = false): NetworkInterfaceInfo =>
    ({ address, family: "IPv4", internal, netmask: "255.255.255.0", mac: "00:00:00:00:00:00", cidr: `${address}/24` }) as NetworkInterfaceInfo;
  const v6 = (address: string, internal = false): NetworkInterfaceInfo =>
    ({
      address,
      family: "IPv6",
      internal,
      netmask: "ffff:ffff:ffff:ffff::",
      mac: "00:00:00:00:00:00",
      cidr: `${address}/64`,
      scopeid: 0,
    }) as NetworkInterfaceInfo;
  return {
    lo: [v4("127.0.0.1", true), v6("::1", true)],
    tun0: [v4("100.64.1.7")],
    docker0: [v4("172.17.0.1")],
    wlan0: [v4("192.168.1.20"), v6("fe80::1c2f:3aff:fe4b:1d2e"), v6("2001:db8::20")],
    eth1: [v4("10.0.0.5")],
    usb0: [v4("169.254.3.4")],
  };
};

describe("the LAN addresses berth serve prints", () => {
  it("lists this machine's addresses for 0.0.0.0, best first, never a loopback or 0.0.0.0 itself", () => {
    expect(lanAddresses("0.0.0.0", laptop())).toEqual(["192.168.1.20", "10.0.0.5", "172.17.0.1", "100.64.1.7", "169.254.3.4"]);
    // `::` takes IPv4 too on Linux; global IPv6 addresses count, link-local ones (which need a zone) do not.
    expect(lanAddresses("::", laptop())).toEqual(["192.168.1.20", "10.0.0.5", "172.17.0.1", "100.64.1.7", "2001:db8::20", "169.254.3.4"]);
    expect(lanAddresses("192.168.1.20", laptop())).toEqual(["192.168.1.20"]);
    for (const loopback of ["127.0.0.1", "127.0.1.1", "::1", "[::1]", "localhost"]) expect(lanAddresses(loopback, laptop())).toEqual([]);
    expect(lanAddresses("0.0.0.0", { lo: laptop().lo })).toEqual([]);
  });

  it("prints the first LAN address instead of 0.0.0.0, the others after, and a QR code of the tokened link", () => {
    const text = startupText({
      url: "http://0.0.0.0:7420",
      token: "tok-123",
      howToGetLink: "dashboard link: berth token --link",
      interfaces: laptop(),
    });
    const lines = text.split("\n");
    expect(lines[0]).toBe("Berth is running: http://192.168.1.20:7420/?token=tok-123 (ACP: ws://192.168.1.20:7420/acp)");
    expect(lines[1]).toBe("Also on: http://10.0.0.5:7420/, http://172.17.0.1:7420/, http://100.64.1.7:7420/, http://169.254.3.4:7420/");
    expect(lines[3]).toBe("Open it on a phone on the same network (this code holds the token):");
    const qr = lines.slice(4).filter((line) => line !== "");
    // A square of half blocks: a version-4 code or larger for a link of this length.
    expect(qr.length).toBeGreaterThanOrEqual(15);
    expect(new Set(qr.map((line) => [...line].length)).size).toBe(1);
    expect(qr.join("")).toMatch(/^[█▀▄ ]+$/);
  });

  it("prints no token and no code when the token is not new, and no code for loopback", () => {
    const quiet = startupText({ url: "http://0.0.0.0:7420", token: null, howToGetLink: "dashboard link: berth token --link", interfaces: laptop() });
    expect(quiet.split("\n")[0]).toBe(
      "Berth is running: http://192.168.1.20:7420/ (ACP: ws://192.168.1.20:7420/acp); dashboard link: berth token --link",
    );
    expect(quiet).not.toContain("█");
    const loopback = startupText({ url: "http://127.0.0.1:7420", token: "tok", howToGetLink: "", interfaces: laptop() });
    expect(loopback).toBe("Berth is running: http://127.0.0.1:7420/?token=tok (ACP: ws://127.0.0.1:7420/acp)\n");
    // Listening on everything with no network at all: loopback is where it can be opened.
    expect(startupText({ url: "http://0.0.0.0:7420", token: null, howToGetLink: "x", interfaces: { lo: laptop().lo } }).split("\n")[0]).toBe(
      "Berth is running: http://127.0.0.1:7420/ (ACP: ws://127.0.0.1:7420/acp); x",
    );
  });

  it("a real berth serve --host 127.0.0.1 prints its one line, without a code", async () => {
    const served = await serveOnTempDir(["--host", "127.0.0.1"]);
    try {
      expect(served.server.stdout).toBe(`Berth is running: ${served.url}/?token=${served.token} (ACP: ${served.acpUrl})\n`);
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await served.stop();
    }
  });
});

/** `fetch` on the fixture with a remembered device's cookie and page half, and nothing else. */
function asDevice(fixture: BerthFixture, cookie: string | undefined, pageSecret: string | undefined, path = "/api/sessions", init: RequestInit = {}) {
  const headers: Record<string, string> = {};
  if (cookie !== undefined) headers.cookie = cookie;
  if (pageSecret !== undefined) headers["x-berth-login"] = pageSecret;
  return fetch(fixture.url + path, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });
}

async function remember(fixture: BerthFixture) {
  const response = await fixture.api("/api/logins", {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": "Mozilla/5.0 (Linux; Android 14) Chrome/130.0 Mobile" },
    body: "{}",
  });
  expect(response.status).toBe(201);
  const setCookie = response.headers.get("set-cookie")!;
  const body = (await response.json()) as { login: { id: string; label: string; current: boolean }; pageSecret: string };
  return { setCookie, cookie: setCookie.split(";")[0]!, ...body };
}

describe("a remembered device", () => {
  it("gets an HttpOnly, SameSite=Strict, year-long cookie named after the port; the cookie or the page half alone lets nothing in", async () => {
    const fixture = await startFixture();
    const port = new URL(fixture.url).port;
    const device = await remember(fixture);
    expect(device.setCookie).toMatch(new RegExp(`^berth-login-${port}=[\\w-]+\\.[\\w-]{43}; Max-Age=31536000; Path=/; HttpOnly; SameSite=Strict$`));
    expect(loginCookieName(Number(port))).toBe(`berth-login-${port}`);
    expect(device.login).toMatchObject({ label: "Chrome on Android", current: true });
    expect(device.pageSecret).toMatch(/^[\w-]{43}$/);
    // Neither half is stored: the file holds a hash, 0600.
    const stored = readFileSync(join(fixture.dataDir, "logins.json"), "utf8");
    expect(stored).not.toContain(device.pageSecret);
    expect(stored).not.toContain(device.cookie.split(".")[1]);

    expect((await asDevice(fixture, device.cookie, device.pageSecret)).status).toBe(200);
    expect((await asDevice(fixture, device.cookie, undefined)).status).toBe(401);
    expect((await asDevice(fixture, undefined, device.pageSecret)).status).toBe(401);
    expect((await asDevice(fixture, device.cookie, "x".repeat(43))).status).toBe(401);
    // The cookie of a Berth on another port is not this one's.
    expect((await asDevice(fixture, device.cookie.replace(`-${port}=`, "-1="), device.pageSecret)).status).toBe(401);
    // The page half is a header only: in a query (which proxies log) it lets nothing in; EventSource and WebSocket take a ticket.
    expect((await asDevice(fixture, device.cookie, undefined, `/api/agents?login=${device.pageSecret}`)).status).toBe(401);

    const listed = (await (await asDevice(fixture, device.cookie, device.pageSecret, "/api/logins")).json()) as {
      logins: { id: string; current: boolean }[];
    };
    expect(listed.logins).toEqual([expect.objectContaining({ id: device.login.id, current: true, label: "Chrome on Android" })]);
    const byToken = (await (await fixture.api("/api/logins")).json()) as { logins: { current: boolean }[] };
    expect(byToken.logins.map((login) => login.current)).toEqual([false]);
  });

  it("is forgotten on DELETE: its browser is told to drop the cookie, and it is refused from then on", async () => {
    const fixture = await startFixture();
    const port = new URL(fixture.url).port;
    const kept = await remember(fixture);
    const forgotten = await remember(fixture);
    const response = await asDevice(fixture, forgotten.cookie, forgotten.pageSecret, `/api/logins/${forgotten.login.id}`, { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(response.headers.get("set-cookie")).toBe(`berth-login-${port}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict`);
    const refused = await asDevice(fixture, forgotten.cookie, forgotten.pageSecret);
    expect(refused.status).toBe(401);
    // A login cookie that lets nothing in is dropped from the browser.
    expect(refused.headers.get("set-cookie")).toBe(`berth-login-${port}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict`);
    expect((await asDevice(fixture, kept.cookie, kept.pageSecret)).status).toBe(200);
    // Forgetting another device from this one leaves this one's cookie alone.
    const third = await remember(fixture);
    const other = await asDevice(fixture, kept.cookie, kept.pageSecret, `/api/logins/${third.login.id}`, { method: "DELETE" });
    expect(other.status).toBe(204);
    expect(other.headers.get("set-cookie")).toBeNull();
    expect((await fixture.api("/api/logins/no-such-login", { method: "DELETE" })).status).toBe(404);
  });
});

describe("a remembered device's cookie shadowed by another port's page", () => {
  it("is let in whichever of the cookies of its name comes first, and no refusal with several of them drops any", async () => {
    const fixture = await startFixture();
    const port = new URL(fixture.url).port;
    const device = await remember(fixture);
    // Another page of this machine set berth-login-<port> for Path=/api: browsers send it first, before the device's own.
    const shadow = `berth-login-${port}=shadow.${"x".repeat(43)}`;
    const shadowed = await asDevice(fixture, `${shadow}; ${device.cookie}`, device.pageSecret);
    expect(shadowed.status).toBe(200);
    expect(shadowed.headers.get("set-cookie")).toBeNull();
    const listed = (await (await asDevice(fixture, `${shadow}; ${device.cookie}`, device.pageSecret, "/api/logins")).json()) as {
      logins: { id: string; current: boolean }[];
    };
    expect(listed.logins).toEqual([expect.objectContaining({ id: device.login.id, current: true })]);
    // Refused with several of that name (a wrong page half): which one the browser would drop is unknown, so none is.
    const refused = await asDevice(fixture, `${shadow}; ${device.cookie}`, "y".repeat(43));
    expect(refused.status).toBe(401);
    expect(refused.headers.get("set-cookie")).toBeNull();
    expect((await asDevice(fixture, device.cookie, device.pageSecret)).status).toBe(200);
    // One cookie that lets nothing in is still dropped.
    expect((await asDevice(fixture, shadow, device.pageSecret)).headers.get("set-cookie")).toBe(
      `berth-login-${port}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict`,
    );
  });
});

describe("rotating the token", () => {
  it("refuses the old token and every remembered device, and ends the event streams and ACP sockets it opened", async () => {
    const fixture = await startFixture();
    const oldToken = fixture.token;
    const device = await remember(fixture);
    const oldAuth = { authorization: `Bearer ${oldToken}` };
    const ws = new WebSocket(fixture.acpUrl, { headers: oldAuth });
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    const ticket = async () =>
      ((await (await fetch(`${fixture.url}/api/tickets`, { method: "POST", headers: oldAuth })).json()) as { ticket: string }).ticket;
    const stream = await fetch(`${fixture.url}/api/events?ticket=${await ticket()}`);
    const unused = await ticket();
    const reader = stream.body!.getReader();
    await reader.read();
    // The stream of this host's own sessions (what its peers follow) tells every session's title, cwd and agent: it ends too.
    const own = await fetch(`${fixture.url}/api/own-sessions/events`, { headers: oldAuth });
    expect(own.status).toBe(200);
    const ownReader = own.body!.getReader();
    await ownReader.read();

    const rotated = await fixture.api("/api/token/rotate", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(await rotated.json()).toEqual({ rotated: true, devicesForgotten: 1 });
    const newToken = readFileSync(join(fixture.dataDir, "token"), "utf8");
    expect(newToken).not.toBe(oldToken);
    expect(newToken).toMatch(/^[\w-]{43}$/);
    expect(fixture.berth.token).toBe(newToken);

    expect((await fetch(`${fixture.url}/api/agents`, { headers: { authorization: `Bearer ${oldToken}` } })).status).toBe(401);
    expect((await fetch(`${fixture.url}/api/agents`, { headers: { authorization: `Bearer ${newToken}` } })).status).toBe(200);
    expect((await asDevice(fixture, device.cookie, device.pageSecret)).status).toBe(401);
    expect(JSON.parse(readFileSync(join(fixture.dataDir, "logins.json"), "utf8"))).toEqual({ logins: [] });
    expect(await closed).toEqual({ code: 1008, reason: "the access token was rotated" });
    // The stream ends; its browser reconnects and is refused.
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
    expect((await fetch(`${fixture.url}/api/events`, { headers: oldAuth })).status).toBe(401);
    for (let chunk = await ownReader.read(); !chunk.done; chunk = await ownReader.read());
    expect((await fetch(`${fixture.url}/api/own-sessions/events`, { headers: oldAuth })).status).toBe(401);
    // A ticket the old token got is revoked with it.
    expect((await fetch(`${fixture.url}/api/events?ticket=${unused}`)).status).toBe(401);
  });

  it("berth token rotate: through the running host, or on the files when none runs", async () => {
    const served = await serveOnTempDir();
    try {
      const { stdout, stderr } = await run(process.execPath, [cliMain, "token", "rotate", "--data-dir", served.dataDir]);
      const newToken = readFileSync(join(served.dataDir, "token"), "utf8");
      expect(stdout).toBe(`${served.url}/?token=${newToken}\n`);
      expect(stderr).toBe("berth token rotate: the old token and 0 remembered devices are refused now; the new dashboard link:\n");
      expect((await fetch(`${served.url}/api/agents`, { headers: { authorization: `Bearer ${served.token}` } })).status).toBe(401);
      expect((await fetch(`${served.url}/api/agents`, { headers: { authorization: `Bearer ${newToken}` } })).status).toBe(200);
      await waitUntil(() => served.server.stderr.includes("access token rotated"), "the host logged the rotation");
    } finally {
      await served.stop();
    }

    const dataDir = tempDir("berth-rotate-");
    const { stdout: first } = await run(process.execPath, [cliMain, "token", "--data-dir", dataDir]);
    const logins = new DeviceLogins(join(dataDir, "logins.json"));
    logins.create(first.trim(), "a phone");
    const { stdout, stderr } = await run(process.execPath, [cliMain, "token", "rotate", "--data-dir", dataDir]);
    expect(stdout.trim()).not.toBe(first.trim());
    expect(stdout).toBe(`${readFileSync(join(dataDir, "token"), "utf8")}\n`);
    expect(stderr).toContain("the old one and 1 remembered device are refused from the next start");
    expect(new DeviceLogins(join(dataDir, "logins.json")).list(stdout.trim())).toEqual([]);
    expect(existsSync(join(dataDir, "host.json"))).toBe(false);
  });

  it("a login made under an old token is no login, even if its file survived (the token file was replaced by hand)", () => {
    const dataDir = tempDir("berth-logins-");
    const path = join(dataDir, "logins.json");
    const made = new DeviceLogins(path).create("old-token-aaaaaaaaaaaaaaaa", "laptop");
    const [id, secret] = made.cookieValue.split(".");
    const reread = new DeviceLogins(path);
    expect(reread.verify("old-token-aaaaaaaaaaaaaaaa", `${id}.${secret}`, made.pageSecret)).toBe(id);
    expect(reread.verify("new-token-bbbbbbbbbbbbbbbb", `${id}.${secret}`, made.pageSecret)).toBeUndefined();
    expect(reread.list("new-token-bbbbbbbbbbbbbbbb")).toEqual([]);
    // A damaged file forgets every device rather than letting one in.
    writeFileSync(path, "{ not json");
    expect(new DeviceLogins(path).verify("old-token-aaaaaaaaaaaaaaaa", made.cookieValue, made.pageSecret)).toBeUndefined();
  });
});

describe("a wrong or stale token in a browser's address", () => {
  it("gets a page saying what to do, not raw JSON; scripts still get JSON", async () => {
    const fixture = await startFixture();
    // As a browser opens an address (fetch cannot send these headers: it sets its own).
    const navigate = { "sec-fetch-mode": "navigate", "sec-fetch-site": "none", accept: "text/html,application/xhtml+xml" };
    const page = await rawGet(`${fixture.url}/api/sessions?token=wrong-token`, navigate);
    expect(page.status).toBe(401);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    const html = page.body;
    expect(html).toContain("This link has no valid access token");
    // Named as this Berth was started (a checkout, from its root): the command works as printed.
    expect(html).toContain("<code>node dist/cli/main.js token --link</code>");
    expect(html).not.toContain("wrong-token");
    expect(html).not.toContain(fixture.token);
    const script = await fetch(`${fixture.url}/api/sessions?token=wrong-token`);
    expect(script.status).toBe(401);
    expect(await script.json()).toEqual({ error: "unauthorized" });
  });
});

describe("the installable web app", () => {
  it("serves its manifest and icons without a token", async () => {
    const fixture = await startFixture();
    const response = await fetch(`${fixture.url}/manifest.webmanifest`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/manifest+json; charset=utf-8");
    const manifest = (await response.json()) as {
      name: string;
      start_url: string;
      display: string;
      icons: { src: string; sizes: string; type: string; purpose: string }[];
    };
    expect(manifest).toMatchObject({ name: "Berth", start_url: "./", display: "standalone" });
    for (const icon of manifest.icons.filter((i) => i.type === "image/png")) {
      const png = Buffer.from(await (await fetch(`${fixture.url}/${icon.src}`)).arrayBuffer());
      // The PNG header's width and height are the declared size.
      expect(`${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`, icon.src).toBe(icon.sizes);
    }
    expect(manifest.icons.some((icon) => icon.purpose === "maskable" && icon.sizes === "512x512")).toBe(true);
  });
});

function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    }).on("error", reject);
  });
}
