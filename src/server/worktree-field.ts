import { z } from "zod";
import type { WorktreeRequest } from "../host/views.js";

const WORKTREE_FORM = "expected true or an object with repository, base and branch, each optional";

/** A session's git worktree as `POST /api/sessions` `worktree` and ACP's `_meta["berth/worktree"]` ask for it (docs/worktrees.md). */
export const worktreeField = z.union(
  [
    z.literal(true),
    z.strictObject({
      repository: z.string({ error: "expected an absolute path" }).min(1, "expected an absolute path").optional(),
      base: z.string({ error: "expected a branch name" }).min(1, "expected a branch name").optional(),
      branch: z.string({ error: "expected a branch name" }).min(1, "expected a branch name").optional(),
    }),
  ],
  { error: WORKTREE_FORM },
);

/** The `worktree` of a new session's parameters, if one was asked for (`true`: every default). */
export function worktreeAsked(field: z.output<typeof worktreeField> | undefined): { worktree?: WorktreeRequest } {
  if (field === undefined) return {};
  return { worktree: field === true ? {} : field };
}
