import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gitDirsOf } from "../../src/sandbox/git-dirs.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "berth-git-dirs-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, stdio: "pipe" });

describe("gitDirsOf", () => {
  const repo = join(root, "repo");
  mkdirSync(join(repo, "src"), { recursive: true });
  git(repo, "init", "-q");
  git(repo, "commit", "-q", "--allow-empty", "-m", "first");

  it("a repository's directory or one inside it: its .git", () => {
    expect(gitDirsOf(repo)).toEqual([join(repo, ".git")]);
    expect(gitDirsOf(join(repo, "src"))).toEqual([join(repo, ".git")]);
  });

  it("a linked worktree: its own git directory and the repository's common one", () => {
    const worktree = join(root, "wt");
    git(repo, "worktree", "add", "-q", worktree);
    expect(gitDirsOf(worktree)).toEqual([join(repo, ".git", "worktrees", "wt"), join(repo, ".git")]);
  });

  it("outside a repository: none", () => {
    const plain = join(root, "plain");
    mkdirSync(plain);
    expect(gitDirsOf(plain)).toEqual([]);
  });
});
