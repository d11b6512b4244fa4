// The token never travels in a URL: EventSource and browser WebSockets, which cannot send a header,
// present a single-use ticket (`POST /api/tickets`) instead. Real Berth, real sockets, real Chromium.
import { afterEach, describe, expect, it } from "vitest";
import { Tickets } from "../../src/server/tickets.js";
import { cleanUp as cleanUpServers, startFixture, upgradeOutcome } from "../server/server-harness.js";
import { cleanUp, launchChromium, startSecureBerth } from "./security-harness.js";

afterEach(async () => {
  await cleanUpServers();
  await cleanUp();
});

describe("tickets", () => {
  it("open one connection each, within their lifetime, by the injected clock", () => {
    let now = 1_000;
    const tickets = new Tickets({ ttlMs: 30_000, now: () => now, max: 3 });
    const first = tickets.issue();
    expect(first.ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.expiresAt).toBe(31_000);
    expect(tickets.redeem(first.ticket)).toBe(true);
    expect(tickets.redeem(first.ticket)).toBe(false);
    expect(tickets.redeem("made-up")).toBe(false);
    expect(tickets.redeem(null)).toBe(false);

    const late = tickets.issue();
    now += 30_000;
    expect(tickets.redeem(late.ticket)).toBe(false);
    const justInTime = tickets.issue();
    now += 29_999;
    expect(tickets.redeem(justInTime.ticket)).toBe(true);

    // At most `max` wait: the oldest goes first.
    const [a, b, c, d] = [tickets.issue(), tickets.issue(), tickets.issue(), tickets.issue()];
    expect([a, b, c, d].map((t) => tickets.redeem(t!.ticket))).toEqual([false, true, true, true]);
  });

  it("POST /api/tickets needs the token; a ticket opens the event stream or a WebSocket once, not twice, not late, not another route", async () => {
    let now = Date.now();
    const fixture = await startFixture({ tickets: { now: () => now } });
    expect((await fetch(`${fixture.url}/api/tickets`, { method: "POST" })).status).toBe(401);
    const ticketOf = async () => {
      const res = await fixture.api("/api/tickets", { method: "POST" });
      expect(res.status).toBe(201);
      const body = (await res.json()) as { ticket: string; expiresAt: number };
      expect(body.expiresAt).toBe(now + 30_000);
      return body.ticket;
    };

    const forEvents = await ticketOf();
    const stream = await fetch(`${fixture.url}/api/events?ticket=${forEvents}`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await stream.body!.cancel();
    expect((await fetch(`${fixture.url}/api/events?ticket=${forEvents}`)).status).toBe(401);

    const forSocket = await ticketOf();
    expect(await upgradeOutcome(`${fixture.acpUrl}?ticket=${forSocket}`, {})).toBe("open");
    expect(await upgradeOutcome(`${fixture.acpUrl}?ticket=${forSocket}`, {})).toBe(401);

    // Only where no header can be sent: a REST call with a ticket is refused, and does not spend it.
    const spare = await ticketOf();
    expect((await fetch(`${fixture.url}/api/agents?ticket=${spare}`)).status).toBe(401);
    expect(await upgradeOutcome(`${fixture.acpUrl}?ticket=${spare}`, { origin: "http://127.0.0.1:1" })).toBe(403);
    expect(await upgradeOutcome(`${fixture.acpUrl}?ticket=${spare}`, {})).toBe("open");

    const expired = await ticketOf();
    now += 30_000;
    expect((await fetch(`${fixture.url}/api/events?ticket=${expired}`)).status).toBe(401);
    expect(await upgradeOutcome(`${fixture.acpUrl}?ticket=${await ticketOf()}`, {})).toBe("open");
  });

  it("the dashboard in a real browser connects with tickets, and no URL it asks for carries the token", async () => {
    const berth = await startSecureBerth();
    const browser = await launchChromium();
    const page = await (await browser.newContext()).newPage();
    const urls: string[] = [];
    page.on("request", (request) => urls.push(request.url()));
    page.on("websocket", (socket) => urls.push(socket.url()));
    await page.goto(`${berth.url}/?token=${berth.token}`);
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
    // Only the link the person opened carries it; the page takes it out of the address bar at once.
    expect(urls.filter((url) => url.includes(berth.token))).toEqual([`${berth.url}/?token=${berth.token}`]);
    expect(urls.some((url) => /\/api\/events\?ticket=[\w-]{43}$/.test(url))).toBe(true);
    // The address keeps no token: the root, or the list the root opens with no conversation to show.
    expect([`${berth.url}/`, `${berth.url}/#/sessions`]).toContain(page.url());
  });
});
