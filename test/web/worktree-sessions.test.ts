// Sessions in git worktrees from the dashboard, against a real Berth and real git repositories in temporary
// directories: the New session dialog's "In a new worktree", its branch shown as the title makes it; the list grouped by
// repository, with ready to review, landed, discarded and the base's commits since.
import { mkdtempSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { gitIn, initRepository } from "../git/git-repository.js";
import { audit } from "./axe-audit.js";
import { dashboardSuite, desktop, openPage, screenshot, type OpenedPage } from "./dashboard-harness.js";

const suite = dashboardSuite();
let opened: OpenedPage | undefined;

afterEach(async ({ task }) => {
  if (task.result?.state === "fail" && opened && !opened.page.isClosed())
    await screenshot(opened.page, `failed-worktree-sessions-${task.name.replace(/\W+/g, "-").slice(0, 50)}`);
  if (opened) expect(opened.errors).toEqual([]);
  await opened?.close();
  opened = undefined;
});

/** A repository of its own for a test, inside the server's work directory (removed with it). */
function repository(): string {
  const dir = mkdtempSync(join(suite.server.workDir, "repo-"));
  initRepository(dir, { "README.md": "the project\n" });
  return dir;
}

/** The dashboard with its New session dialog open, the demo agent chosen; axe's script needs the page's CSP bypassed. */
async function newSessionDialog(options = desktop): Promise<Page> {
  opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}`, options);
  const { page } = opened;
  await page.getByRole("banner").getByRole("button", { name: "New session" }).click();
  await page.getByRole("dialog", { name: "New session" }).getByLabel("Agent").selectOption("demo");
  return page;
}

/** Starts the session the dialog describes: its id, from the conversation the page goes to (the page may have opened on another). */
async function startFrom(page: Page): Promise<string> {
  const before = page.url();
  await page.getByRole("dialog", { name: "New session" }).getByRole("button", { name: "Start session" }).click();
  await page.waitForURL((url) => url.href !== before && url.hash.startsWith("#/sessions/"));
  return decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
}

describe("a new session in a new worktree, from the dashboard", () => {
  it("shows the branch the title will make, starts the session in the worktree and names its branch; the fields pass axe", async () => {
    const dir = repository();
    const page = await newSessionDialog({ ...desktop, bypassCSP: true });
    const dialog = page.getByRole("dialog", { name: "New session" });
    expect(await dialog.getByLabel("Base branch (optional)").count()).toBe(0);
    await dialog.getByLabel("In a new worktree").check();
    await dialog.getByText("Default: berth/ and the session's short id.").waitFor();
    await dialog.getByLabel("Title (optional)").fill("Add a greeting, café!");
    await dialog.getByText("Default: berth/add-a-greeting-cafe.").waitFor();
    expect(await audit(page, "New session dialog with the worktree fields")).toEqual([]);

    await dialog.getByLabel("Directory").fill(dir);
    const sessionId = await startFrom(page);
    const session = suite.server.berth.host.getSession(sessionId)!;
    expect(session.worktree).toMatchObject({ repository: dir, branch: "berth/add-a-greeting-cafe", base: "main", state: "active" });
    expect(session.cwd).toBe(session.worktree!.path);
    expect(session.title).toBe("Add a greeting, café!");
    expect(gitIn(session.cwd, "branch", "--show-current").trim()).toBe("berth/add-a-greeting-cafe");

    await page.goto(`${suite.server.url}/#/sessions/${encodeURIComponent(sessionId)}/changes`);
    await page.getByText("Branch berth/add-a-greeting-cafe from main").waitFor();
  });

  it("takes a base and a branch of the person's choosing, and says in plain words when the directory is no git checkout", async () => {
    const dir = repository();
    gitIn(dir, "branch", "release");
    const page = await newSessionDialog();
    const dialog = page.getByRole("dialog", { name: "New session" });
    await dialog.getByLabel("In a new worktree").check();
    await dialog.getByLabel("Directory").fill(suite.server.workDir);
    await dialog.getByRole("button", { name: "Start session" }).click();
    expect(await dialog.getByRole("alert").textContent()).toBe(`${suite.server.workDir} is not in a git repository`);

    await dialog.getByLabel("Directory").fill(dir);
    await dialog.getByLabel("Base branch (optional)").fill("release");
    await dialog.getByLabel("New branch (optional)").fill("try-it");
    const sessionId = await startFrom(page);
    expect(suite.server.berth.host.getSession(sessionId)!.worktree).toMatchObject({ repository: dir, branch: "try-it", base: "release" });
  });
});

describe("the session list, grouped by repository", () => {
  it("puts two repositories' sessions in two groups; a worktree session's chip says ready to review, then landed or discarded; a moved base shows behind", async () => {
    const first = repository();
    const second = repository();
    const host = suite.server.berth.host;
    const greeting = await host.createSession({ cwd: first, worktree: {}, title: "Add a greeting" });
    const dropped = await host.createSession({ cwd: first, worktree: {}, title: "Try a thing" });
    const plain = await host.createSession({ cwd: second });
    opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions`);
    const { page } = opened;
    const group = (dir: string) => page.getByRole("list", { name: `Sessions in ${basename(dir)}` });
    const row = (sessionId: string) => page.locator(`li.session-row[data-session-id="${sessionId}"]`);

    await group(first).locator(`li.session-row[data-session-id="${greeting.id}"]`).waitFor();
    await group(first).locator(`li.session-row[data-session-id="${dropped.id}"]`).waitFor();
    await group(second).locator(`li.session-row[data-session-id="${plain.id}"]`).waitFor();
    expect(await page.getByRole("heading", { name: basename(first) }).getAttribute("title")).toBe(first);
    expect(await row(greeting.id).locator(".chip").textContent()).toBe("idle");

    const { stopReason } = await host.prompt(greeting.id, [{ type: "text", text: `/write ${join(greeting.cwd, "greeting.txt")} Hello` }]);
    expect(stopReason).toBe("end_turn");
    await row(greeting.id).locator(".chip", { hasText: "ready to review" }).waitFor({ timeout: 20_000 });

    writeFileSync(join(first, "base.txt"), "the base moved\n");
    gitIn(first, "add", "-A");
    gitIn(first, "commit", "--quiet", "-m", "the base moves on");
    const divergence = row(greeting.id).locator(".session-divergence");
    await divergence.getByText("0 commits ahead of main, 1 behind").waitFor({ timeout: 20_000 });
    expect(await divergence.locator("[aria-hidden=true]").textContent()).toBe("↑0 ↓1");

    await host.landSession(greeting.id, "Add a greeting");
    await row(greeting.id).locator(".chip", { hasText: "landed" }).waitFor({ timeout: 20_000 });
    await host.discardSession(dropped.id);
    await row(dropped.id).locator(".chip", { hasText: "discarded" }).waitFor({ timeout: 20_000 });
    expect(await row(plain.id).locator(".chip").textContent()).toBe("idle");
  });
});
