import { execFile } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliMain, serveOnTempDir } from "../server/serve-process.js";
import { initRepository, writeIn } from "../git/git-repository.js";

const run = promisify(execFile);
let serve: Awaited<ReturnType<typeof serveOnTempDir>>;
let repo: string;
let sessionId: string;

async function berth(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cliMain, ...args, "--data-dir", serve.dataDir], {
      env: { ...process.env, XDG_CONFIG_HOME: serve.dataDir },
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

beforeAll(async () => {
  repo = realpathSync(mkdtempSync(join(tmpdir(), "berth-cli-review-")));
  initRepository(repo, { "a.txt": "one\ntwo\n", "b.txt": "keep\n" });
  writeIn(repo, "a.txt", "one\n2\nthree\n");
  writeIn(repo, "c.txt", "new\n");
  serve = await serveOnTempDir();
  const created = await fetch(`${serve.url}/api/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${serve.token}`, "content-type": "application/json" },
    body: JSON.stringify({ cwd: repo }),
  });
  sessionId = ((await created.json()) as { id: string }).id;
});

afterAll(async () => {
  await serve.stop();
  rmSync(repo, { recursive: true, force: true });
});

describe("berth changes, comment and comments", () => {
  it("berth changes prints a table of the changed files, or one file's patch; a bad path is refused by name", async () => {
    const table = await berth("changes", sessionId);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^STATUS\s+PATH\s+ADDED\s+REMOVED$/);
    expect(lines[1]).toMatch(/^modified\s+a\.txt\s+\+2\s+-1$/);
    expect(lines[2]).toMatch(/^added\s+c\.txt\s+\+1\s+-0$/);
    expect(lines[3]).toMatch(/^2 files changed, \+3 -1 against [0-9a-f]{12}$/);
    const json = JSON.parse((await berth("changes", sessionId, "--json")).stdout) as { files: { path: string }[] };
    expect(json.files.map((file) => file.path)).toEqual(["a.txt", "c.txt"]);

    const patch = await berth("changes", sessionId, "--file", "a.txt");
    expect(patch.stdout).toContain("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n one\n-two\n+2\n+three\n");
    const refused = await berth("changes", sessionId, "--file", "../etc/passwd");
    expect(refused).toMatchObject({ code: 1, stdout: "" });
    expect(refused.stderr).toContain('path "../etc/passwd" leaves the repository');
  });

  it("berth comment adds one on file:line, berth comments lists them and --send sends them as one prompt", async () => {
    const added = await berth("comment", sessionId, "a.txt:2", "spell", "it", "out");
    expect(added).toMatchObject({ code: 0, stdout: expect.stringMatching(/^added \S+ on a\.txt:2\n$/) });
    expect((await berth("comment", sessionId, "a.txt:2", "--old", "was", "fine")).stdout).toMatch(/ on a\.txt:2 \(old\)\n$/);
    const bad = await berth("comment", sessionId, "a.txt", "no line");
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('expected <file:line>, e.g. src/a.ts:12, got "a.txt"') });
    const notChanged = await berth("comment", sessionId, "b.txt:1", "untouched");
    expect(notChanged).toMatchObject({ code: 1, stderr: expect.stringContaining('"b.txt" is not among the session\'s changed files') });

    const listed = (await berth("comments", sessionId)).stdout.trimEnd().split("\n");
    expect(listed[0]).toMatch(/^COMMENT\s+WHERE\s+SENT\s+TEXT$/);
    expect(listed.slice(1).map((line) => line.split(/\s{2,}/).slice(1))).toEqual([
      ["a.txt:2", "-", "spell it out"],
      ["a.txt:2 (old)", "-", "was fine"],
    ]);
    const sent = await berth("comments", sessionId, "--send");
    expect(sent.stdout).toBe(
      "sent 2 comments to the agent:\n\nReview comments on your changes:\n\na.txt:2 — spell it out\n    2 | 2\n\na.txt:2 (old) — was fine\n    2 | two\n",
    );
    const after = await berth("comments", sessionId, "--json");
    expect((JSON.parse(after.stdout) as { sentAt: number | null }[]).every((comment) => comment.sentAt !== null)).toBe(true);
    expect(await berth("comments", sessionId, "--send")).toMatchObject({ code: 1, stderr: expect.stringContaining("has no unsent review comments") });
  });
});
