/** Where a worktree session is in its life: working, its branch merged into its base, or thrown away. */
type WorktreeState = "active" | "landed" | "discarded";

/** A session's git worktree, as stored on the session (`sessions.worktree`) and shown in its view. */
export interface Worktree {
  /** The main checkout (absolute) whose repository the worktree belongs to; landing merges there. */
  readonly repository: string;
  /** The worktree's directory: the session's cwd. */
  readonly path: string;
  readonly branch: string;
  /** The branch the worktree started from and lands into. */
  readonly base: string;
  /** The base's commit when the worktree was made. */
  readonly baseCommit: string;
  readonly state: WorktreeState;
  /** The base's commit after landing. */
  readonly landedCommit?: string;
  readonly createdAt: number;
}

const STATES: readonly WorktreeState[] = ["active", "landed", "discarded"];

/** The stored JSON as a worktree; null for a plain directory. Throws naming the field a damaged one lacks. */
export function worktreeOf(stored: unknown): Worktree | null {
  if (stored === null || stored === undefined) return null;
  if (typeof stored !== "object" || Array.isArray(stored)) throw new Error("a session's worktree must be a JSON object");
  const value = stored as Record<string, unknown>;
  for (const field of ["repository", "path", "branch", "base", "baseCommit"] as const) {
    if (typeof value[field] !== "string" || value[field] === "") throw new Error(`a session's worktree lacks its ${field}`);
  }
  if (!STATES.includes(value.state as WorktreeState)) throw new Error(`a session's worktree has an unknown state ${JSON.stringify(value.state)}`);
  if (typeof value.createdAt !== "number") throw new Error("a session's worktree lacks its createdAt");
  if (value.landedCommit !== undefined && typeof value.landedCommit !== "string") throw new Error("a session's worktree has a bad landedCommit");
  return {
    repository: value.repository as string,
    path: value.path as string,
    branch: value.branch as string,
    base: value.base as string,
    baseCommit: value.baseCommit as string,
    state: value.state as WorktreeState,
    ...(value.landedCommit === undefined ? {} : { landedCommit: value.landedCommit as string }),
    createdAt: value.createdAt,
  };
}
