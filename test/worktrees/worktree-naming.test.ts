import { describe, expect, it } from "vitest";
import { defaultBranch } from "../../src/protocol/branch-naming.js";
import { worktreePath } from "../../src/worktrees/naming.js";
import { worktreeOf } from "../../src/worktrees/worktree.js";

const id = "0123abcd-89ef-4000-8000-000000000000";

describe("a worktree's branch and folder names", () => {
  it("the branch is berth/ and the title's slug: lower-case words joined by dashes, accents dropped, at most 40 characters of whole words", () => {
    expect(defaultBranch("Fix the login page!", id)).toBe("berth/fix-the-login-page");
    expect(defaultBranch("  Crème brûlée -- v2.0 ", id)).toBe("berth/creme-brulee-v2-0");
    expect(defaultBranch("a very long title that goes on and on past forty characters", id)).toBe("berth/a-very-long-title-that-goes-on-and-on");
    expect(defaultBranch("a very long title that goes on and on-pa", id)).toBe("berth/a-very-long-title-that-goes-on-and-on-pa");
    expect(defaultBranch("x".repeat(50), id)).toBe(`berth/${"x".repeat(40)}`);
  });

  it("without a title, or one with no letter or digit, the branch is berth/ and the session's short id", () => {
    expect(defaultBranch(undefined, id)).toBe("berth/0123abcd");
    expect(defaultBranch("!!! ???", id)).toBe("berth/0123abcd");
  });

  it("the folder is the repository's name and the short id, under the root", () => {
    expect(worktreePath("/data/worktrees", "/home/me/My Project", id)).toBe("/data/worktrees/my-project-0123abcd");
    expect(worktreePath("/data/worktrees", "/", id)).toBe("/data/worktrees/repository-0123abcd");
  });
});

describe("a stored worktree record", () => {
  const record = {
    repository: "/r",
    path: "/w/r-1",
    branch: "berth/x",
    base: "main",
    baseCommit: "abc",
    state: "landed",
    landedCommit: "def",
    createdAt: 1,
  };

  it("reads back as it was written; null for a plain directory", () => {
    expect(worktreeOf(record)).toEqual(record);
    expect(worktreeOf({ ...record, state: "active", landedCommit: undefined })).toEqual({
      ...record,
      state: "active",
      landedCommit: undefined,
    });
    expect(worktreeOf(null)).toBeNull();
  });

  it("a damaged record is refused naming what is wrong", () => {
    expect(() => worktreeOf([])).toThrow("a session's worktree must be a JSON object");
    expect(() => worktreeOf({ ...record, branch: "" })).toThrow("a session's worktree lacks its branch");
    expect(() => worktreeOf({ ...record, state: "merged" })).toThrow('a session\'s worktree has an unknown state "merged"');
    expect(() => worktreeOf({ ...record, createdAt: "yesterday" })).toThrow("a session's worktree lacks its createdAt");
    expect(() => worktreeOf({ ...record, landedCommit: 7 })).toThrow("a session's worktree has a bad landedCommit");
  });
});
