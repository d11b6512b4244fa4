import { CodedError } from "../protocol/coded-error.js";

/** Why a worktree could not be made, landed or discarded; each names what was wrong and how to go on. */
export type WorktreeRefusal =
  // The request itself is wrong (400 / -32602).
  | "not_a_git_repository"
  | "unknown_base"
  | "branch_exists"
  | "path_exists"
  | "invalid_worktree"
  | "setup_failed"
  // The repository or session is not in a state to do it (409).
  | "not_a_worktree_session"
  | "worktree_closed"
  | "worktree_busy"
  | "check_failed"
  | "merge_conflict"
  | "not_fast_forward"
  | "main_checkout_dirty"
  | "main_checkout_elsewhere";

const BAD_INPUT: ReadonlySet<WorktreeRefusal> = new Set([
  "not_a_git_repository",
  "unknown_base",
  "branch_exists",
  "path_exists",
  "invalid_worktree",
  "setup_failed",
]);

export class WorktreeError extends CodedError<WorktreeRefusal> {
  override readonly name = "WorktreeError";
  constructor(
    code: WorktreeRefusal,
    message: string,
    /** What a setup or check command printed; the conflicting files of a merge. */
    readonly details: { readonly output?: string; readonly files?: readonly string[] } = {},
  ) {
    super(code, message);
  }

  /** The request was wrong (else the repository or session was not ready for it). */
  get badInput(): boolean {
    return BAD_INPUT.has(this.code);
  }
}
