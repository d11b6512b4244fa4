import { removeWorktree } from "./worktree-creation.js";
import type { Worktree } from "./worktree.js";

/** Throws the worktree away: its directory and its branch, whatever they held. The worktree it returns says `discarded`. */
export async function discardWorktree(worktree: Worktree): Promise<Worktree> {
  await removeWorktree(worktree);
  return { ...worktree, state: "discarded" };
}
