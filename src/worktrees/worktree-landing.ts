import { git, GitError, tryGit } from "../git/git.js";
import type { SandboxPlan } from "../sandbox/bwrap-args.js";
import { runProjectStep, type StepOutcome } from "./project-command.js";
import { branchCommit, WORKTREE_GIT_TIMEOUT_MS } from "./worktree-creation.js";
import { WorktreeError } from "./worktree-errors.js";
import type { Worktree } from "./worktree.js";

/** How landing joins the branch to its base: a merge commit always, or only a fast-forward. */
type MergeStyle = "merge" | "ff-only";

export interface LandingOptions {
  /** The commit message for what the worktree holds uncommitted. */
  readonly message: string;
  /** The configured check command (`worktrees.check`), else the repository's `.berth/check` if any. */
  readonly check: string | undefined;
  /** How long the check may run (`worktrees.timeout`). */
  readonly timeoutMs: number;
  readonly merge: MergeStyle;
  /** Told the check's outcome before anything is merged (the host journals it). */
  readonly checked: (outcome: StepOutcome) => void;
  /** The session's sandbox, which the repository's `.berth/check` runs in (the agent may have written it). */
  readonly sandbox: SandboxPlan | undefined;
}

/**
 * Lands an active worktree: the check runs (a failure refuses, nothing merged), everything in the worktree is
 * committed, the main checkout is checked (on the base branch, no uncommitted changes to tracked files) and a merge
 * that would conflict is refused before the main checkout is touched; then the branch is merged there. The worktree
 * it returns says `landed`, with the base's new commit; the caller removes the worktree and its branch (`removeWorktree`) once
 * nothing runs in it.
 */
export async function landWorktree(worktree: Worktree, options: LandingOptions): Promise<Worktree> {
  const { repository, path, branch, base } = worktree;
  const checked = await runProjectStep("check", path, options.check, options.timeoutMs, options.sandbox);
  if (checked) {
    options.checked(checked);
    if (checked.failure)
      throw new WorktreeError("check_failed", `the check (${checked.command}) ${checked.failure}: nothing was merged`, { output: checked.output });
  }
  const long = { timeoutMs: WORKTREE_GIT_TIMEOUT_MS };
  await git(path, ["add", "-A"], long);
  if ((await tryGit(path, ["diff", "--cached", "--quiet"])).exitCode !== 0) await git(path, ["commit", "--quiet", "-m", options.message], long);
  await assertMainCheckoutReady(repository, base);
  const branchHead = (await branchCommit(repository, branch))!;
  await assertMergeable(worktree, branchHead, options.merge);
  const mergeArgs =
    options.merge === "ff-only"
      ? ["merge", "--quiet", "--ff-only", branch]
      : ["merge", "--quiet", "--no-ff", "-m", `Merge branch '${branch}'`, branch];
  const merged = await tryGit(repository, mergeArgs, long);
  if (merged.exitCode !== 0) {
    // Nothing half-merged stays in the main checkout (an untracked file in the way, a race with a commit there).
    await tryGit(repository, ["merge", "--abort"]);
    throw new WorktreeError(
      "merge_conflict",
      `merging ${branch} into ${base} failed, nothing was merged: ${(merged.stderr || merged.stdout).trim()}`,
    );
  }
  const landedCommit = (await git(repository, ["rev-parse", "HEAD"])).trim();
  return { ...worktree, state: "landed", landedCommit };
}

/** The main checkout is touched only by the merge: on the base, with no uncommitted changes to tracked files. */
async function assertMainCheckoutReady(repository: string, base: string): Promise<void> {
  const head = await tryGit(repository, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  const current = head.exitCode === 0 ? head.stdout.trim() : "a detached HEAD";
  if (current !== base)
    throw new WorktreeError(
      "main_checkout_elsewhere",
      `the main checkout ${repository} is on ${current}, not on ${base}, the branch to land into: run git -C ${repository} switch ${base}, then land again`,
    );
  const changed = (await git(repository, ["status", "--porcelain", "--untracked-files=no"])).trim();
  if (changed !== "")
    throw new WorktreeError(
      "main_checkout_dirty",
      `the main checkout ${repository} has uncommitted changes to tracked files (${changedFiles(changed).join(", ")}): commit or stash them, then land again`,
      { files: changedFiles(changed) },
    );
}

/** A merge that would conflict (or not fast-forward) is refused from the trees alone (`git merge-tree`), before any checkout is touched. */
async function assertMergeable(worktree: Worktree, branchHead: string, style: MergeStyle): Promise<void> {
  const { repository, branch, base } = worktree;
  if (style === "ff-only") {
    if ((await tryGit(repository, ["merge-base", "--is-ancestor", base, branchHead])).exitCode !== 0)
      throw new WorktreeError(
        "not_fast_forward",
        `${base} has moved on since ${branch} was made: a fast-forward is not possible (worktrees.merge is "ff-only")`,
      );
    return;
  }
  const trialArgs = ["merge-tree", "--write-tree", "--name-only", "--no-messages", base, branchHead];
  const trial = await tryGit(repository, trialArgs);
  if (trial.exitCode === 0) return;
  if (trial.exitCode !== 1) throw new GitError(trialArgs, "refused", trial.exitCode, trial.stderr);
  // The first line is the merged tree; the conflicting files follow.
  const files = [...new Set(trial.stdout.trim().split("\n").slice(1).filter(Boolean))];
  throw new WorktreeError(
    "merge_conflict",
    `${branch} conflicts with ${base} in ${files.join(", ")}: nothing was merged. Rebase ${branch} onto ${base} in the worktree (the session's agent can), then land again`,
    { files },
  );
}

function changedFiles(porcelain: string): string[] {
  return porcelain.split("\n").map((line) => line.slice(3));
}
