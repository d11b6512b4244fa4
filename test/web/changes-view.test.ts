// The Changes view against a real Berth, real git repositories in temporary directories and the demo agent's /write:
// the changed files with their counts and diffs, live as the agent writes, comments sent to the agent, Land and
// Discard, a phone's layout.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { initRepository } from "../changes/git-repo.js";
import { dashboardSuite, desktop, openPage, phone, screenshot, type OpenedPage } from "./dashboard-harness.js";

const POLL = { timeout: 20_000, interval: 50 };

const suite = dashboardSuite();
let opened: OpenedPage | undefined;

afterEach(async ({ task }) => {
  if (task.result?.state === "fail" && opened && !opened.page.isClosed())
    await screenshot(opened.page, `failed-changes-${task.name.replace(/\W+/g, "-").slice(0, 50)}`);
  await opened?.close();
  opened = undefined;
});

/** A repository of its own for a test, inside the server's work directory (removed with it). */
function repository(files: Record<string, string>): string {
  const dir = mkdtempSync(join(suite.server.workDir, "repo-"));
  initRepository(dir, files);
  return dir;
}

/** Has the demo agent write `content` to `path` (relative to `dir`) through the host, as a turn of the session. */
async function agentWrites(sessionId: string, dir: string, path: string, content: string): Promise<void> {
  const { stopReason } = await suite.server.berth.host.prompt(sessionId, [{ type: "text", text: `/write ${join(dir, path)} ${content}` }]);
  expect(stopReason).toBe("end_turn");
}

async function openChanges(sessionId: string, options = desktop, path = ""): Promise<Page> {
  opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions/${sessionId}/changes${path}`, options);
  return opened.page;
}

const fileLink = (page: Page, path: string) => page.getByRole("navigation", { name: "Changed files" }).getByRole("link", { name: new RegExp(path) });

describe("the Changes view", () => {
  it("lists a file the agent wrote with its counts, shows its diff, and follows the agent's next write live", async () => {
    const dir = repository({ "notes.txt": "one\ntwo\nthree\n" });
    const { id } = await suite.server.berth.host.createSession({ cwd: dir });
    await agentWrites(id, dir, "notes.txt", "one\n2\nthree\nfour\n");
    const page = await openChanges(id);

    const notes = fileLink(page, "notes.txt");
    await notes.waitFor();
    expect(await notes.textContent()).toContain("modified");
    expect(await notes.locator(".added").textContent()).toBe("+2");
    expect(await notes.locator(".removed").textContent()).toBe("−1");
    await page.getByText("1 file changed, +2 −1").waitFor();

    await notes.click();
    const diff = page.locator(".changes-file .diff");
    await diff.locator(".diff-line.add", { hasText: "four" }).waitFor();
    expect(await diff.locator(".diff-line.del .code").allTextContents()).toEqual(["-two"]);
    expect(await diff.locator(".diff-line.add .code").allTextContents()).toEqual(["+2", "+four"]);

    // The agent writes another file and changes this one: the list and the open diff follow without a reload.
    await agentWrites(id, dir, "docs/new.md", "# New\n");
    await agentWrites(id, dir, "notes.txt", "one\n2\nthree\nfour\nfive\n");
    await fileLink(page, "docs/new.md").waitFor();
    expect(await fileLink(page, "docs/new.md").textContent()).toContain("added");
    await diff.locator(".diff-line.add", { hasText: "five" }).waitFor();
    await page.getByText("2 files changed, +4 −1").waitFor();
    await screenshot(page, "changes-desktop");
    expect(opened!.errors).toEqual([]);
  });

  it("says in plain words that a directory outside git has no changes to show", async () => {
    const dir = mkdtempSync(join(suite.server.workDir, "plain-"));
    const { id } = await suite.server.berth.host.createSession({ cwd: dir });
    const page = await openChanges(id);
    await page.getByText("is not in a git repository, so Berth has nothing to compare it with").waitFor();
    expect(await page.locator(".changes-head .path, .changes .empty .path").first().textContent()).toBe(dir);
    expect(opened!.errors).toEqual([]);
  });
});
