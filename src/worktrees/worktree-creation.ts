import { existsSync, mkdirSync } from "node:fs";
import { isAbsolute } from "node:path";
import { git, tryGit } from "../git/git.js";
import { commitOf, topLevelOf } from "../git/repository.js";
import { defaultBranch } from "../protocol/branch-naming.js";
import { worktreePath } from "./naming.js";
import { WorktreeError } from "./worktree-errors.js";
import type { Worktree } from "./worktree.js";

/** git that checks out or removes a whole tree, or runs the repository's hooks (a commit's, a checkout's), may take this long. */
export const WORKTREE_GIT_TIMEOUT_MS = 10 * 60_000;

/** What a client asks for (`_meta["berth/worktree"]`, `POST /api/sessions` `worktree`); every field optional. */
export interface WorktreeRequest {
  /** An absolute path in a git checkout; default the session's cwd. */
  readonly repository?: string;
  /** A branch; default the checkout's current branch. */
  readonly base?: string;
  /** Default `berth/<slug of the title>`, else `berth/<short id>`. */
  readonly branch?: string;
}

export interface WorktreePlace {
  /** The session's cwd as asked: the repository unless the request names one. */
  readonly cwd: string;
  /** The folder the worktree is made under. */
  readonly root: string;
  readonly sessionId: string;
  readonly title?: string;
  readonly now: number;
}

/**
 * Runs `git worktree add -b <branch> <path> <base>` for a new session, after checking each part of the request (each
 * refusal names it; nothing is made then). The worktree it returns says `active`.
 */
export async function createWorktree(request: WorktreeRequest, place: WorktreePlace): Promise<Worktree> {
  const asked = request.repository ?? place.cwd;
  if (!isAbsolute(asked))
    throw new WorktreeError("invalid_worktree", `the worktree's repository (else the cwd) must be an absolute path, got ${JSON.stringify(asked)}`);
  const repository = await topLevel(asked);
  const base = request.base ?? (await currentBranch(repository));
  const baseCommit = await branchCommit(repository, base);
  if (baseCommit === undefined)
    throw new WorktreeError("unknown_base", `the repository ${repository} has no branch "${base}" to start the worktree from`);
  const branch = request.branch ?? defaultBranch(place.title, place.sessionId);
  if ((await tryGit(repository, ["check-ref-format", "--branch", branch])).exitCode !== 0)
    throw new WorktreeError("invalid_worktree", `"${branch}" is not a valid branch name`);
  if ((await branchCommit(repository, branch)) !== undefined)
    throw new WorktreeError("branch_exists", `the repository ${repository} has a branch "${branch}" already: name another (branch)`);
  const path = worktreePath(place.root, repository, place.sessionId);
  if (existsSync(path)) throw new WorktreeError("path_exists", `the worktree's directory ${path} exists already`);
  mkdirSync(place.root, { recursive: true });
  await git(repository, ["worktree", "add", "--quiet", "-b", branch, path, baseCommit], { timeoutMs: WORKTREE_GIT_TIMEOUT_MS });
  return { repository, path, branch, base, baseCommit, state: "active", createdAt: place.now };
}

/** Removes the worktree's directory and its branch (`git worktree remove --force`, `git branch -D`). */
export async function removeWorktree(worktree: Worktree): Promise<void> {
  const { repository, path, branch } = worktree;
  // A directory removed by hand leaves git's entry for it: pruned instead.
  if (existsSync(path)) await git(repository, ["worktree", "remove", "--force", path], { timeoutMs: WORKTREE_GIT_TIMEOUT_MS });
  else await git(repository, ["worktree", "prune"]);
  if ((await branchCommit(repository, branch)) !== undefined) await git(repository, ["branch", "-D", branch]);
}

/** The main checkout's top directory, which landing merges into; refused if `path` is in no git checkout. */
async function topLevel(path: string): Promise<string> {
  if (!existsSync(path)) throw new WorktreeError("not_a_git_repository", `${path} does not exist`);
  const common = await tryGit(path, ["rev-parse", "--path-format=absolute", "--git-common-dir"]);
  if (common.exitCode !== 0) throw new WorktreeError("not_a_git_repository", `${path} is not in a git repository`);
  // The main checkout even when `path` is in one of its worktrees: the one whose .git is the common directory.
  const main = await topLevelOf(`${common.stdout.trim()}/..`);
  if (main === undefined) throw new WorktreeError("not_a_git_repository", `${path} is in a bare repository: worktrees need a checkout`);
  return main;
}

async function currentBranch(repository: string): Promise<string> {
  const result = await tryGit(repository, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  if (result.exitCode !== 0) throw new WorktreeError("unknown_base", `the checkout ${repository} is on no branch (a detached HEAD): name a base`);
  return result.stdout.trim();
}

/** The commit of branch `name`; undefined if there is no such branch. */
export function branchCommit(repository: string, name: string): Promise<string | undefined> {
  return commitOf(repository, `refs/heads/${name}`);
}
