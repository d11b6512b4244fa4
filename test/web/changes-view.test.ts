// The Changes view against a real Berth, real git repositories in temporary directories and the demo agent's /write:
// the changed files with their counts and diffs, live as the agent writes, comments sent to the agent, Land and
// Discard of a worktree, a phone's layout.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { gitIn, initRepository, writeIn } from "../git/git-repository.js";
import { dashboardSuite, desktop, holdRequests, nextFrames, openPage, phone, screenshot, type OpenedPage } from "./dashboard-harness.js";
import { tooSmallToTap } from "./tap-targets.js";
import { audit } from "./axe-audit.js";

const POLL = { timeout: 20_000, interval: 50 };
/** What a finger taps in the Changes view: its buttons (a diff line's among them), fields, files and ways back. */
const TAPPED = "button, textarea, a.button, a.changed-file, a.back-to-files, a.conversation-link";

// The check a worktree must pass to land: it fails while the agent's worktree has a file named failing.txt.
const CHECK = "if [ -f failing.txt ]; then echo '1 check failed: failing.txt is still there'; exit 1; fi; echo 'all checks passed'";
const suite = dashboardSuite({ worktrees: { check: CHECK } });
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

/** Commits a change of `path` on the repository's checked-out branch (the base moving on). */
function commitOnBase(dir: string, path: string, content: string): void {
  writeIn(dir, path, content);
  gitIn(dir, "commit", "--quiet", "-am", `base changes ${path}`);
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

/** The prompts of the session's turns, as its journal keeps them. */
async function promptsOf(sessionId: string): Promise<string[]> {
  const response = await fetch(`${suite.server.url}/api/sessions/${sessionId}/events?after=0&limit=10000`, {
    headers: { authorization: `Bearer ${suite.server.token}` },
  });
  const { events } = (await response.json()) as { events: { kind: string; payload: { prompt?: { type: string; text?: string }[] } }[] };
  return events
    .filter((event) => event.kind === "turn_started")
    .map((event) => (event.payload.prompt ?? []).map((block) => block.text ?? "").join(""));
}

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
    await agentWrites(id, dir, "new.md", "# New\n");
    await agentWrites(id, dir, "notes.txt", "one\n2\nthree\nfour\nfive\n");
    await fileLink(page, "new.md").waitFor();
    expect(await fileLink(page, "new.md").textContent()).toContain("added");
    await diff.locator(".diff-line.add", { hasText: "five" }).waitFor();
    await page.getByText("2 files changed, +4 −1").waitFor();
    expect(opened!.errors).toEqual([]);
  });

  it("says in plain words that a directory outside git has no changes to show, and the conversation offers no Changes link", async () => {
    const dir = mkdtempSync(join(suite.server.workDir, "plain-"));
    const { id } = await suite.server.berth.host.createSession({ cwd: dir });
    await suite.server.berth.host.prompt(id, [{ type: "text", text: "hello" }]);
    const page = await openChanges(id);
    await page.getByText("is not in a git repository, so Berth has nothing to compare it with").waitFor();
    expect(await page.locator(".changes .empty .path").textContent()).toBe(dir);

    await page.getByRole("link", { name: "← Conversation" }).click();
    await page.getByRole("log", { name: "Conversation" }).locator(".message").first().waitFor();
    expect(
      await page
        .locator(".chat-head")
        .getByRole("link", { name: /Changes/ })
        .count(),
    ).toBe(0);
    expect(opened!.errors).toEqual([]);
  });

  it("takes a comment on a line, edits and deletes comments, and sends them to the agent as one prompt naming file:line", async () => {
    const dir = repository({ "notes.txt": "one\ntwo\nthree\n" });
    const { id } = await suite.server.berth.host.createSession({ cwd: dir });
    await agentWrites(id, dir, "notes.txt", "one\n2\nthree\nfour\n");
    opened = await openPage(suite.launched.browser, suite.server.url, `/?token=${suite.server.token}#/sessions/${id}`);
    const { page } = opened;

    // From the conversation's header: the Changes link with its totals.
    const link = page.locator(".chat-head").getByRole("link", { name: /Changes/ });
    expect(await link.textContent()).toBe("Changes +2 −1");
    await link.click();
    await fileLink(page, "notes.txt").click();

    await page.getByRole("button", { name: "Comment on notes.txt:4" }).click();
    await page.getByRole("textbox", { name: "Comment on notes.txt:4" }).fill("Say four in words and digits");
    await page.getByRole("button", { name: "Save comment" }).click();
    const onFour = page.getByRole("article", { name: "Comment on notes.txt:4" });
    await onFour.getByText("not sent yet").waitFor();
    // Shown under its line: the row right before it is line 4's.
    expect(await onFour.evaluate((comment) => comment.parentElement?.previousElementSibling?.textContent)).toContain("four");

    // A comment on the removed line, then deleted; the first one edited.
    await page.getByRole("button", { name: "Comment on notes.txt:2 (removed line)" }).click();
    await page.getByRole("textbox", { name: "Comment on notes.txt:2 (removed line)" }).fill("Why was two removed?");
    // Saved (held here) while the person opens another line's box: that box stays open once the save ends.
    const comments = (url: URL) => url.pathname === `/api/sessions/${id}/comments`;
    const save = await holdRequests(page, comments, { method: "POST" });
    await page.getByRole("textbox", { name: "Comment on notes.txt:2 (removed line)" }).press("Control+Enter");
    await save.asked;
    // A save under way is not taken back.
    expect(await page.locator("form.comment-box").getByRole("button", { name: "Cancel" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Comment on notes.txt:1" }).click();
    const onOne = page.getByRole("textbox", { name: "Comment on notes.txt:1" });
    await onOne.fill("Not sent");
    save.release();
    const onTwo = page.getByRole("article", { name: "Comment on notes.txt:2 (removed line)" });
    await onTwo.waitFor();
    await nextFrames(page);
    expect(await onOne.count()).toBe(1);
    expect(await onOne.inputValue()).toBe("Not sent");
    await page.unroute(comments);
    // A save that fails once another line's box is open says so in its own box, its text kept.
    const failing = await holdRequests(page, comments, {
      method: "POST",
      reply: { status: 503, json: { error: "store_unavailable", message: "the store cannot write yet" } },
    });
    await onOne.press("Control+Enter");
    await failing.asked;
    await page.getByRole("button", { name: "Comment on notes.txt:3" }).click();
    const onThree = page.getByRole("textbox", { name: "Comment on notes.txt:3" });
    await onThree.waitFor();
    failing.release();
    const oneBox = page.locator("form.comment-box", { has: onOne });
    await oneBox.getByRole("alert").waitFor();
    expect(await oneBox.getByRole("alert").textContent()).toBe("Not saved: The store cannot write yet");
    expect(await onOne.inputValue()).toBe("Not sent");
    expect(await onThree.count()).toBe(1);
    await page.unroute(comments);
    await onThree.press("Escape");
    await onThree.waitFor({ state: "detached" });
    await onOne.press("Escape");
    await onOne.waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Send 2 comments to the agent" }).waitFor();
    // The agent's next write has the comments read again; that read (held here) answers after the deletion: the
    // deleted comment stays deleted.
    const read = await holdRequests(page, comments, { method: "GET", reply: "answered" });
    await agentWrites(id, dir, "other.txt", "another file\n");
    await read.asked;
    await onTwo.getByRole("button", { name: /^Delete/ }).click();
    await onTwo.waitFor({ state: "detached" });
    const staleRead = page.waitForResponse((response) => comments(new URL(response.url())) && response.request().method() === "GET");
    read.release();
    await (await staleRead).finished();
    await nextFrames(page);
    expect(await onTwo.count()).toBe(0);
    await page.unroute(comments);
    await onFour.getByRole("button", { name: /^Edit/ }).click();
    await page.getByRole("textbox", { name: "Edit the comment on notes.txt:4" }).fill("Write four as 4");
    await page.getByRole("button", { name: "Save comment" }).click();
    await onFour.getByText("Write four as 4").waitFor();
    expect(await fileLink(page, "notes.txt").textContent()).toContain("1 comment");
    await screenshot(page, "changes-comment-desktop");

    await page.getByRole("button", { name: "Send 1 comment to the agent" }).click();
    await onFour.getByText("sent to the agent").waitFor();
    expect(await onFour.getByRole("button").count()).toBe(0);
    await page.getByText("Sent 1 comment to the agent as one message").waitFor();

    // The two writes, then the comments' prompt.
    await expect.poll(() => promptsOf(id), POLL).toHaveLength(3);
    const review = (await promptsOf(id))[2]!;
    expect(review).toContain("notes.txt:4 — Write four as 4");
    expect(review).not.toContain("Why was two removed?");
    expect(review).not.toContain("Say four in words");

    // The way back to the conversation: its new turn, the comments' prompt, is there.
    await page.getByRole("link", { name: "← Conversation" }).click();
    await page.getByRole("log", { name: "Conversation" }).getByText("notes.txt:4 — Write four as 4").first().waitFor();
    expect(opened!.errors).toEqual([]);
  });

  it("lands a worktree session whose check passes, and shows it landed", async () => {
    const dir = repository({ "notes.txt": "one\n" });
    const session = await suite.server.berth.host.createSession({ cwd: dir, worktree: {}, title: "Add a second line" });
    await agentWrites(session.id, session.cwd, "notes.txt", "one\ntwo\n");
    const page = await openChanges(session.id);
    await fileLink(page, "notes.txt").waitFor();

    await page.getByRole("button", { name: "Land…" }).click();
    const dialog = page.getByRole("dialog", { name: /^Land / });
    expect(await dialog.getByLabel("Commit message").inputValue()).toBe("Add a second line");
    await dialog.getByLabel("Commit message").fill("Notes: a second line");
    await dialog.getByRole("button", { name: "Land", exact: true }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByText(/^Landed into main as [0-9a-f]{12}$/).waitFor();
    await page.getByText("These changes are in main now").waitFor();
    expect(await page.getByRole("button", { name: "Land…" }).count()).toBe(0);
    expect(gitIn(dir, "log", "--format=%s", "main")).toContain("Notes: a second line");
    // The conversation's header says it too, and reads nothing of a directory that is gone.
    await page.getByRole("link", { name: "← Conversation" }).click();
    await page.locator(".chat-head").getByRole("link", { name: "Changes (landed)" }).waitFor();
    expect(opened!.errors).toEqual([]);
  });

  it("shows a failing check's output and lands nothing", async () => {
    const dir = repository({ "notes.txt": "one\n" });
    const session = await suite.server.berth.host.createSession({ cwd: dir, worktree: {}, title: "Leave a failing file" });
    await agentWrites(session.id, session.cwd, "failing.txt", "oops\n");
    const page = await openChanges(session.id);
    await fileLink(page, "failing.txt").waitFor();

    await page.getByRole("button", { name: "Land…" }).click();
    const dialog = page.getByRole("dialog", { name: /^Land / });
    await dialog.getByRole("button", { name: "Land", exact: true }).click();
    await dialog.getByText("The check failed, so nothing was landed.").waitFor();
    expect(await dialog.locator(".check-output").textContent()).toContain("1 check failed: failing.txt is still there");
    await screenshot(page, "changes-land-check-failed");
    await dialog.getByRole("button", { name: "Close" }).click();
    await page.getByText("not landed yet").waitFor();
    expect(gitIn(dir, "log", "--format=%s", "main").trim()).toBe("base");
    expect(opened!.errors).toEqual([]);
  });

  it("names a conflict's files, and asks the agent to resolve it through the conversation's message box", async () => {
    const dir = repository({ "notes.txt": "one\n" });
    const session = await suite.server.berth.host.createSession({ cwd: dir, worktree: {}, title: "Change the first line" });
    await agentWrites(session.id, session.cwd, "notes.txt", "uno\n");
    // Meanwhile the base moved on the same line.
    commitOnBase(dir, "notes.txt", "eins\n");
    const page = await openChanges(session.id);
    await fileLink(page, "notes.txt").waitFor();

    await page.getByRole("button", { name: "Land…" }).click();
    const dialog = page.getByRole("dialog", { name: /^Land / });
    await dialog.getByRole("button", { name: "Land", exact: true }).click();
    await dialog.getByText("The branch does not merge cleanly, so nothing was landed. This file conflicts:").waitFor();
    expect(await dialog.locator(".conflict-files li").allTextContents()).toEqual(["notes.txt"]);
    await dialog.getByRole("button", { name: "Ask the agent to resolve it" }).click();

    // The conversation opens with the prompt sent from its message box: one turn naming the file.
    const conversation = page.getByRole("log", { name: "Conversation" });
    await conversation.getByText("These files conflict: notes.txt.").first().waitFor();
    await expect
      .poll(async () => (await promptsOf(session.id)).filter((prompt) => prompt.includes("These files conflict: notes.txt.")), POLL)
      .toHaveLength(1);
    expect(gitIn(dir, "log", "--format=%s", "main")).not.toContain("Change the first line");
    expect(opened!.errors).toEqual([]);
  });

  it("discards a worktree session once confirmed", async () => {
    const dir = repository({ "notes.txt": "one\n" });
    const session = await suite.server.berth.host.createSession({ cwd: dir, worktree: {}, title: "Try something" });
    await agentWrites(session.id, session.cwd, "notes.txt", "changed\n");
    const page = await openChanges(session.id);
    await fileLink(page, "notes.txt").waitFor();

    await page.getByRole("button", { name: "Discard…" }).click();
    const dialog = page.getByRole("dialog", { name: "Discard these changes?" });
    await dialog.getByRole("button", { name: "Keep it" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Discard…" }).click();
    await dialog.getByRole("button", { name: "Discard changes" }).click();
    await page.getByText("Discarded: the branch and its worktree are gone").waitFor();
    await page.getByText("These changes were thrown away").waitFor();
    expect(await page.getByRole("button", { name: "Discard…" }).count()).toBe(0);
    expect(gitIn(dir, "branch", "--list", session.worktree!.branch).trim()).toBe("");
    expect(opened!.errors).toEqual([]);
  });

  it("on a phone: the list, then one file with its way back, lines and links a finger's size, nothing sideways", async () => {
    const dir = repository({ "notes.txt": "one\ntwo\nthree\n", "src/app.ts": "export const a = 1;\n" });
    const { id } = await suite.server.berth.host.createSession({ cwd: dir });
    await agentWrites(id, dir, "notes.txt", "one\n2\nthree\nfour\n");
    await agentWrites(id, dir, "src/app.ts", "export const a = 2;\n");
    const page = await openChanges(id, phone);

    await fileLink(page, "src/app.ts").waitFor();
    expect(await page.locator(".changes-file").isVisible()).toBe(false);
    expect(await tooSmallToTap(page, TAPPED)).toEqual([]);

    await fileLink(page, "notes.txt").tap();
    await page.getByRole("button", { name: "Comment on notes.txt:4" }).tap();
    await page.getByRole("textbox", { name: "Comment on notes.txt:4" }).fill("Spell it out");
    await page.getByRole("button", { name: "Save comment" }).tap();
    await page.getByRole("article", { name: "Comment on notes.txt:4" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Changed files" }).isVisible()).toBe(false);
    expect(await tooSmallToTap(page, TAPPED)).toEqual([]);
    expect(await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")).toBe(0);
    await screenshot(page, "changes-comment-phone");

    await page.getByRole("link", { name: "← All files" }).tap();
    await fileLink(page, "src/app.ts").waitFor();
    expect(opened!.errors).toEqual([]);
  });

  // axe needs its script tag let past the page's CSP: the browser context allows it.
  it.each([
    ["light", { ...desktop, colorScheme: "light", bypassCSP: true }],
    ["dark", { ...desktop, colorScheme: "dark", bypassCSP: true }],
    ["phone dark", { ...phone, colorScheme: "dark", bypassCSP: true }],
  ] as const)("finds no serious or critical axe violation in the view, its comments and the Land dialog, %s", async (scheme, options) => {
    const dir = repository({ "notes.txt": "one\ntwo\n" });
    const session = await suite.server.berth.host.createSession({ cwd: dir, worktree: {}, title: `Axe ${scheme}` });
    await agentWrites(session.id, session.cwd, "notes.txt", "one\n2\n");
    await agentWrites(session.id, session.cwd, "failing.txt", "oops\n");
    await suite.server.berth.host.addReviewComment(session.id, { path: "notes.txt", line: 2, side: "new", body: "Two in words" });
    const page = await openChanges(session.id, options, "/notes.txt");
    await page.getByRole("article", { name: "Comment on notes.txt:2" }).waitFor();
    await page.getByRole("button", { name: "Comment on notes.txt:1" }).click();
    await page.getByRole("textbox", { name: "Comment on notes.txt:1" }).waitFor();
    const findings = await audit(page, "Changes view with a comment and a comment box");

    await page.getByRole("button", { name: "Land…" }).click();
    const dialog = page.getByRole("dialog", { name: /^Land / });
    await dialog.getByRole("button", { name: "Land", exact: true }).click();
    await dialog.locator(".check-output").waitFor();
    findings.push(...(await audit(page, "Land dialog with a failed check")));
    expect(findings.map((f) => `${f.view}: ${f.id} (${f.impact}) at ${f.targets.join(", ")}`)).toEqual([]);
    expect(opened!.errors).toEqual([]);
  });
});
