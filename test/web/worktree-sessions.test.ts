// Sessions in git worktrees from the dashboard, against a real Berth and real git repositories in temporary
// directories: the New session dialog's "In a new worktree", its branch shown as the title makes it.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { gitIn, initRepository } from "../changes/git-repo.js";
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
  await page.getByRole("button", { name: "New session" }).click();
  await page.getByRole("dialog", { name: "New session" }).getByLabel("Agent").selectOption("demo");
  return page;
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
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL(/#\/sessions\//);
    const sessionId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
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
    await dialog.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL(/#\/sessions\//);
    const sessionId = decodeURIComponent(new URL(page.url()).hash.slice("#/sessions/".length));
    expect(suite.server.berth.host.getSession(sessionId)!.worktree).toMatchObject({ repository: dir, branch: "try-it", base: "release" });
  });
});
