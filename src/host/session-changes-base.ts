import { mergeBase } from "../changes/change-set.js";
import { WorktreeError } from "../worktrees/worktree-errors.js";
import { worktreeOf } from "../worktrees/worktree.js";
import type { SessionCatalog } from "./session-catalog.js";

/** Where a session's changes are read, and the ref they are read against. */
interface ChangesBase {
  readonly cwd: string;
  readonly base: string;
}

/**
 * A plain directory's changes are against `HEAD`; a session in an active worktree of its own reads against where its
 * branch left its base (`mergeBase`), so the commits its agent made still count and the base's later commits do not.
 * A landed or discarded worktree's directory is gone: refused naming what became of it (docs/review.md).
 */
export async function changesBase(catalog: SessionCatalog, sessionId: string): Promise<ChangesBase> {
  const { cwd, worktree: stored } = catalog.require(sessionId);
  const worktree = worktreeOf(stored);
  if (!worktree) return { cwd, base: "HEAD" };
  if (worktree.state === "landed")
    throw new WorktreeError(
      "worktree_closed",
      `session "${sessionId}"'s worktree was landed into ${worktree.base} at commit ${worktree.landedCommit} of ${worktree.repository}, and its directory removed: its changes are in ${worktree.base} now`,
    );
  if (worktree.state === "discarded")
    throw new WorktreeError("worktree_closed", `session "${sessionId}"'s worktree was discarded, and its changes with it`);
  return { cwd, base: await mergeBase(cwd, worktree.branch, worktree.baseCommit) };
}
