import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mergeBase, readChanges } from "../../src/changes/change-set.js";
import { checkedPath, readChangedFile } from "../../src/changes/changed-file.js";
import { ChangesError } from "../../src/changes/changes-error.js";
import { gitIn, initRepository, removeTempDirs, tempDir, writeIn } from "../git/git-repository.js";

afterEach(removeTempDirs);

describe("readChanges", () => {
  it("against a worktree's merge-base: the branch's commits and uncommitted files count, the base branch's later commits do not", async () => {
    const repo = tempDir();
    initRepository(repo, { "shared.txt": "base\n" });
    const baseCommit = gitIn(repo, "rev-parse", "HEAD");
    const worktree = join(tempDir(), "wt");
    gitIn(repo, "worktree", "add", "--quiet", "-b", "feature", worktree, baseCommit);
    writeIn(worktree, "feature.txt", "committed on the branch\n");
    gitIn(worktree, "add", "feature.txt");
    gitIn(worktree, "commit", "--quiet", "-m", "feature");
    writeIn(worktree, "draft.txt", "not committed yet\n");
    // The base branch moves on meanwhile: not the session's change.
    writeIn(repo, "main-only.txt", "later on main\n");
    gitIn(repo, "add", "main-only.txt");
    gitIn(repo, "commit", "--quiet", "-m", "main moves on");

    const base = await mergeBase(worktree, "feature", "main");
    expect(base).toBe(baseCommit);
    const changes = await readChanges(worktree, base);
    expect(changes.base).toBe(baseCommit);
    expect(changes.files.map((file) => [file.path, file.status])).toEqual([
      ["draft.txt", "added"],
      ["feature.txt", "added"],
    ]);
    // Against HEAD (a plain directory's base) the branch's own commit is not a change.
    expect((await readChanges(worktree)).files.map((file) => file.path)).toEqual(["draft.txt"]);
  });

  it("a repository with no commit yet: every file is added, against git's empty tree", async () => {
    const repo = tempDir();
    gitIn(repo, "init", "--quiet");
    writeIn(repo, "first.txt", "a\nb\n");
    const changes = await readChanges(repo);
    expect(changes).toEqual({
      base: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
      files: [{ path: "first.txt", status: "added", added: 2, removed: 0, binary: false }],
      totals: { files: 1, added: 2, removed: 0 },
    });
  });

  it("a symbolic link shows the path it points to, never the file there", async () => {
    const repo = tempDir();
    initRepository(repo, { "a.txt": "a\n" });
    const secret = join(tempDir(), "secret.txt");
    writeIn(secret.slice(0, secret.lastIndexOf("/")), "secret.txt", "do not show\n");
    symlinkSync(secret, join(repo, "link"));
    const file = await readChangedFile(repo, "link");
    expect(file).toMatchObject({ status: "added", newText: secret });
  });

  it("a file over 16 MiB is not read: no text, no patch, its size in cut", async () => {
    const repo = tempDir();
    initRepository(repo, { "huge.log": "" });
    writeIn(repo, "huge.log", `${"y".repeat(1023)}\n`.repeat(17 * 1024));
    const file = await readChangedFile(repo, "huge.log");
    expect(file).toMatchObject({ oldText: "", newText: "", patch: "", cut: { limitBytes: 262_144, newBytes: 17 * 1024 * 1024 } });
  });

  it("a directory outside git is refused naming it", async () => {
    const plain = tempDir();
    await expect(readChanges(plain)).rejects.toThrow(
      new ChangesError("not_a_git_repository", `the session's directory ${plain} is not in a git repository, so it has no changes to show`),
    );
  });
});

describe("checkedPath", () => {
  it("takes repository-relative paths and refuses absolute ones and any with ..", () => {
    expect(checkedPath("src/./a.ts")).toBe("src/a.ts");
    expect(checkedPath("a..b.txt")).toBe("a..b.txt");
    for (const path of ["", "/etc/passwd", "../x", "a/../../x", "a/../b", "a\\..\\b", "a\0b"])
      expect(() => checkedPath(path), JSON.stringify(path)).toThrow(ChangesError);
  });
});
