import { WorktreeError } from "../worktrees/worktree-errors.js";
import { worktreeDivergence, type WorktreeDivergence } from "../worktrees/worktree-divergence.js";
import { worktreeOf } from "../worktrees/worktree.js";
import type { SessionView } from "./views.js";

/** An active worktree session's distance from its base, and whether it waits for a person's review (docs/worktrees.md). */
export interface WorktreeStatusView extends WorktreeDivergence {
  /** Its agent is done for now and left something to look at: changes (ahead or uncommitted), no turn running, no question pending. */
  readonly readyToReview: boolean;
}

/**
 * Read from git on request, not in every session view: a list of 50 worktree sessions took 50 git runs (about
 * 0.25 s, more with the uncommitted files) on each read, and views are read on every change of any session.
 */
export async function worktreeStatus(view: SessionView): Promise<WorktreeStatusView> {
  const worktree = worktreeOf(view.worktree);
  if (!worktree) throw new WorktreeError("not_a_worktree_session", `session "${view.id}" works in a plain directory, not a worktree of its own`);
  if (worktree.state !== "active")
    throw new WorktreeError("worktree_closed", `session "${view.id}"'s worktree was ${worktree.state}: it has no branch to compare`);
  const divergence = await worktreeDivergence(worktree);
  const changed = divergence.ahead > 0 || divergence.uncommitted > 0;
  return { ...divergence, readyToReview: changed && !view.turnActive && view.pendingQuestions === 0 };
}
