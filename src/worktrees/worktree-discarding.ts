import { removeWorktree } from "./worktree-creation.js";
import type { WorktreeRecord } from "./worktree-record.js";

/** Throws the worktree away: its directory and its branch, whatever they held. The record says `discarded`. */
export async function discardWorktree(record: WorktreeRecord): Promise<WorktreeRecord> {
  await removeWorktree(record);
  return { ...record, state: "discarded" };
}
