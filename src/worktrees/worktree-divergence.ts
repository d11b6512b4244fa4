import { git } from "../git/git.js";
import type { Worktree } from "./worktree.js";

/** How far an active worktree's branch is from its base, and what it holds uncommitted (docs/worktrees.md, "Ahead and behind"). */
export interface WorktreeDivergence {
  /** Commits on the branch that the base lacks. */
  readonly ahead: number;
  /** Commits on the base since the branch left it (the base moved on). */
  readonly behind: number;
  /** Files changed in the worktree and not committed (tracked or not). */
  readonly uncommitted: number;
}

/** Read from git each time: the base moves in the main checkout and the agent commits in the worktree, neither telling Berth. */
export async function worktreeDivergence(worktree: Worktree): Promise<WorktreeDivergence> {
  const counts = await git(worktree.repository, [
    "rev-list",
    "--left-right",
    "--count",
    `refs/heads/${worktree.base}...refs/heads/${worktree.branch}`,
  ]);
  const [behind, ahead] = counts.trim().split(/\s+/).map(Number);
  const status = await git(worktree.path, ["status", "--porcelain", "--untracked-files=all"]);
  const uncommitted = status.split("\n").filter((line) => line !== "").length;
  return { ahead: ahead ?? 0, behind: behind ?? 0, uncommitted };
}
