import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { parseConfig } from "../../src/config/load-config.js";
import { silentLogger } from "../../src/host/logger.js";
import { startBerth, type RunningBerth } from "../../src/server/serve.js";
import { holdRequests, launchBrowser, openPage, waitUntilGone, webDir, type LaunchedBrowser, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 30_000, interval: 50 };

/**
 * A Berth that can be stopped and started again on the same port and data directory, as a host
 * restart is: the page must find it again by itself.
 */
class RestartableBerth {
  berth: RunningBerth | null = null;
  port = 0;
  readonly childPids = new Set<number>();
  readonly dataDir = mkdtempSync(join(tmpdir(), "berth-web-restart-data-"));
  readonly workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-web-restart-work-")));

  async start(): Promise<RunningBerth> {
    const berth = await startBerth({
      config: parseConfig({ releaseGrace: "60s" }),
      dataDir: this.dataDir,
      listenHost: "127.0.0.1",
      port: this.port,
      log: silentLogger(),
      webDir,
    });
    this.port = Number(new URL(berth.server.url).port);
    berth.host.onRecord(({ record }) => {
      if (record.kind === "child_acquired") this.childPids.add(record.pid);
    });
    this.berth = berth;
    return berth;
  }

  async stop(): Promise<void> {
    await this.berth?.shutdown();
    this.berth = null;
  }

  get running(): RunningBerth {
    if (!this.berth) throw new Error("Berth is not running");
    return this.berth;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.workDir, { recursive: true, force: true });
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

let host: RestartableBerth;
let launched: LaunchedBrowser;
let main: OpenedPage;
let sessionId: string;

beforeAll(async () => {
  host = new RestartableBerth();
  await host.start();
  launched = await launchBrowser();
});

afterAll(async () => {
  await main?.close();
  const browserPids = launched ? await launched.pids().catch(() => []) : [];
  await launched?.browser.close();
  await host?.remove();
  expect(await waitUntilGone([...(host?.childPids ?? []), ...browserPids])).toEqual([]);
});

const transcript = (page: Page) => page.getByRole("log", { name: "Conversation" });
const outbox = (page: Page) => page.getByRole("list", { name: "Messages not sent yet" });

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByLabel("Message to the agent");
  await box.fill(text);
  await box.press("Enter");
}

/** The host's lifecycle records (they outlive restarts), from its REST API. */
async function records(): Promise<Array<{ id: number; record: { kind: string; sessionId?: string } }>> {
  const { url, token } = { url: host.running.server.url, token: host.running.token };
  const response = await fetch(`${url}/api/records?limit=1000`, { headers: { authorization: `Bearer ${token}` } });
  return ((await response.json()) as { records: Array<{ id: number; record: { kind: string; sessionId?: string } }> }).records;
}

/** Agent children started for the session after the record `afterId`. */
async function childrenStarted(afterId: number): Promise<number> {
  return (await records()).filter(({ id, record }) => id > afterId && record.sessionId === sessionId && record.kind === "child_acquired").length;
}

/**
 * A chat on a new session whose link the test cuts as a network would: `cutLink()` closes its ACP socket, and holds
 * its way back (the session's read, `tryingBack` once asked) and its journal's reads until `restore()`.
 */
async function chatWithCuttableLink() {
  const session = (await host.running.host.createSession({ cwd: host.workDir })).id;
  const sockets: Array<() => Promise<void>> = [];
  const opened = await openPage(
    launched.browser,
    host.running.server.url,
    `/?token=${host.running.token}#/sessions/${session}`,
    undefined,
    async (page) => {
      await page.routeWebSocket(/\/acp/, (socket) => {
        const server = socket.connectToServer();
        sockets.push(async () => {
          await Promise.all([socket.close({ code: 1006 }).catch(() => undefined), server.close().catch(() => undefined)]);
        });
      });
    },
  );
  const cutLink = async () => {
    const { page } = opened;
    const back = await holdRequests(page, (address) => address.pathname === `/api/sessions/${session}`, { times: 1 });
    let down = true;
    await page.route(
      (address) => address.pathname === `/api/sessions/${session}/events`,
      (route) => (down ? route.abort() : route.fallback()),
    );
    await sockets.at(-1)!();
    return {
      tryingBack: back.asked,
      restore: () => {
        down = false;
        back.release();
      },
    };
  };
  return { session, opened, cutLink };
}

async function sessionView(id = sessionId): Promise<{ state: string; holders: number; pid: number | null }> {
  const response = await fetch(`${host.running.server.url}/api/sessions/${id}`, {
    headers: { authorization: `Bearer ${host.running.token}` },
  });
  return (await response.json()) as { state: string; holders: number; pid: number | null };
}

describe("a chat that is never stuck, and reads without booting", () => {
  it("opens an old session after a restart from its journal, without holding it or starting its agent (rule L9)", async () => {
    const berth = host.running;
    sessionId = (await berth.host.createSession({ cwd: host.workDir })).id;
    expect((await berth.host.prompt(sessionId, [{ type: "text", text: "Remember the milk" }])).stopReason).toBe("end_turn");
    await host.stop();
    await host.start();
    const restartedAt = Math.max(0, ...(await records()).map(({ id }) => id));

    main = await openPage(launched.browser, host.running.server.url, `/?token=${host.running.token}#/sessions/${sessionId}`);
    const { page } = main;
    await transcript(page).locator(".message.agent", { hasText: "Remember the milk" }).waitFor();
    await page.getByRole("button", { name: "Resume" }).waitFor();
    // The journal was read (the reply is shown): nothing holds the session, no agent was started.
    expect(await sessionView()).toMatchObject({ state: "childless", holders: 0, pid: null });
    expect(await childrenStarted(restartedAt)).toBe(0);

    // A message starts it.
    await send(page, "And the bread");
    await transcript(page).locator(".message.agent", { hasText: "And the bread" }).waitFor();
    expect(await childrenStarted(restartedAt)).toBe(1);
    expect((await sessionView()).holders).toBe(1);
    expect(main.errors).toEqual([]);
  });

  it("queues a message typed during a turn, shows it as queued, and sends it when the turn ends", async () => {
    const { page } = main;
    await send(page, "/sleep 1500ms");
    await expect.poll(() => page.getByRole("button", { name: "Cancel turn" }).isEnabled(), POLL).toBe(true);
    await send(page, "Queued behind the sleep");
    await outbox(page).getByText("Queued: sends when the turn ends").waitFor();
    expect(await outbox(page).getByText("Queued behind the sleep").count()).toBe(1);
    await transcript(page).locator(".message.agent", { hasText: "Queued behind the sleep" }).waitFor();
    await outbox(page).waitFor({ state: "detached" });
    await transcript(page).locator(".message.agent", { hasText: "Slept" }).first().waitFor();
  });

  it("stops the running turn and sends the queued message with 'Stop and send'", async () => {
    const { page } = main;
    await send(page, "/sleep 1h");
    await expect.poll(() => page.getByRole("button", { name: "Cancel turn" }).isEnabled(), POLL).toBe(true);
    await send(page, "Sent after stopping");
    await outbox(page).getByRole("button", { name: "Stop and send" }).click();
    await transcript(page).locator(".stop", { hasText: "Turn ended: cancelled" }).waitFor();
    await transcript(page).locator(".message.agent", { hasText: "Sent after stopping" }).waitFor();
    await outbox(page).waitFor({ state: "detached" });
  });

  it("shows a message whose turn failed as failed, with the agent's reason, rather than dropping it", async () => {
    const { page } = main;
    await send(page, "/fail -32603 The model is overloaded");
    await transcript(page).locator(".stop.failed", { hasText: "The model is overloaded" }).waitFor();
    expect(await transcript(page).locator(".message.user", { hasText: "/fail -32603 The model is overloaded" }).count()).toBe(1);
    await outbox(page).waitFor({ state: "detached" });
  });

  it("reconnects by itself after a host restart on the same port and data directory; messages sent meanwhile go out", async () => {
    const { page } = main;
    await host.stop();
    const lost = page.getByRole("status").filter({ hasText: "Berth cannot be reached" });
    await lost.waitFor();
    // Typed while Berth is away: kept, shown as queued, never dropped.
    await send(page, "Written while Berth was down");
    await outbox(page).getByText("Written while Berth was down").waitFor();
    await host.start();
    await lost.waitFor({ state: "detached", timeout: 30_000 });
    await transcript(page).locator(".message.agent", { hasText: "Written while Berth was down" }).waitFor();
    await send(page, "And after it came back");
    await transcript(page).locator(".message.agent", { hasText: "And after it came back" }).waitFor();
    // Each message went out once.
    expect(await transcript(page).locator(".message.user", { hasText: "Written while Berth was down" }).count()).toBe(1);
    expect(main.errors).toEqual([]);
  });

  it("lets go of a session closed while it was being resumed: the connection opened meanwhile holds nothing", async () => {
    const { page } = main;
    const readOnly = (await host.running.host.createSession({ cwd: host.workDir })).id;
    await page.evaluate(`window.location.hash = "#/sessions/${readOnly}"`);
    await page.getByRole("button", { name: "Resume" }).waitFor();
    // Resume's first step (reading the session's directory) is held until the chat was closed.
    const resume = await holdRequests(page, (url) => url.pathname === `/api/sessions/${readOnly}`, { times: 1 });
    await page.getByRole("button", { name: "Resume" }).click();
    await resume.asked;
    await page.getByRole("button", { name: "Close", exact: true }).click();
    await page.getByRole("button", { name: "Resume" }).waitFor({ state: "detached" });
    // The chat's connection opens after its close, and is closed again at once (held, this test times out).
    const socketClosed = new Promise<void>((resolve) => page.once("websocket", (socket) => socket.once("close", () => resolve())));
    resume.release();
    await socketClosed;
    expect(await sessionView(readOnly)).toMatchObject({ holders: 0, state: "childless" });
    expect(main.errors).toEqual([]);
  });

  it("closes a chat whose link no longer answers: its socket goes after a short wait, and the session's hold with it", async () => {
    const quiet = (await host.running.host.createSession({ cwd: host.workDir })).id;
    const { url } = host.running.server;
    const { token } = host.running;
    // The page's ACP socket as a link that died without a word would be for `session/close`: it never gets there.
    const opened = await openPage(launched.browser, url, `/?token=${token}#/sessions/${quiet}`, undefined, async (page) => {
      await page.routeWebSocket(/\/acp/, (socket) => {
        const server = socket.connectToServer();
        socket.onMessage((message) => {
          if (!String(message).includes('"session/close"')) server.send(message);
        });
      });
    });
    try {
      const { page } = opened;
      const socketClosed = new Promise<void>((resolve) => page.once("websocket", (socket) => socket.once("close", () => resolve())));
      await send(page, "Hello before leaving");
      await transcript(page).locator(".message.agent", { hasText: "Hello before leaving" }).waitFor();
      expect(await sessionView(quiet)).toMatchObject({ holders: 1 });
      await page.evaluate(`window.location.hash = "#/sessions"`);
      await socketClosed;
      await expect.poll(async () => (await sessionView(quiet)).holders, POLL).toBe(0);
      expect(opened.errors).toEqual([]);
    } finally {
      await opened.close();
    }
  });

  it("sends a message cut off mid-send once only: back after its turn ended, the chat reads the journal before anything goes", async () => {
    const { session, opened, cutLink } = await chatWithCuttableLink();
    try {
      const { page } = opened;
      const turnActive = () => host.running.host.getSession(session)?.turnActive === true;
      await send(page, "/sleep 1s");
      await expect.poll(turnActive, POLL).toBe(true);
      // The chat's way back waits until the turn ended and the page was told so.
      const link = await cutLink();
      await link.tryingBack;
      await expect.poll(turnActive, POLL).toBe(false);
      // The list's chip for it: the page's overview has the turn's end.
      await expect.poll(() => page.locator(`li.session-row[data-session-id="${session}"] .chip`).textContent(), POLL).not.toBe("working");
      link.restore();
      await outbox(page).waitFor({ state: "detached", timeout: 30_000 });
      await expect.poll(turnActive, POLL).toBe(false);
      const prompted = host.running.host
        .events(session)
        .filter((event) => event.kind === "turn_started" && JSON.stringify(event.payload).includes("/sleep 1s"));
      expect(prompted).toHaveLength(1);
    } finally {
      await opened.close();
    }
  });

  it("keeps 'Stop and send' disabled while the chat cannot reach Berth (nothing could stop the turn); the message goes after", async () => {
    const { opened, cutLink } = await chatWithCuttableLink();
    try {
      const { page } = opened;
      await send(page, "/sleep 1h");
      await expect.poll(() => page.getByRole("button", { name: "Cancel turn" }).isEnabled(), POLL).toBe(true);
      await send(page, "Queued while the link was down");
      const stopAndSend = outbox(page).getByRole("button", { name: "Stop and send" });
      await expect.poll(() => stopAndSend.isEnabled(), POLL).toBe(true);
      // The chat's link goes; the turn runs on. Its way back is held: the chat is trying, not reaching. (The status
      // "Berth cannot be reached" shows only until the first attempt, half a second later: too short to wait for.)
      const link = await cutLink();
      try {
        await link.tryingBack;
        const cancel = page.getByRole("button", { name: "Cancel turn" });
        await expect.poll(() => cancel.getAttribute("title"), POLL).toMatch(/^Berth cannot be reached/);
        await expect.poll(() => stopAndSend.isDisabled(), POLL).toBe(true);
      } finally {
        link.restore();
      }
      await expect.poll(() => stopAndSend.isEnabled(), POLL).toBe(true);
      await stopAndSend.click();
      await transcript(page).locator(".message.agent", { hasText: "Queued while the link was down" }).waitFor();
      expect(opened.errors).toEqual([]);
    } finally {
      await opened.close();
    }
  });
});
