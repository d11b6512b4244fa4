import { ChangesError } from "./changes-error.js";
import { git } from "../git/git.js";
import { commitOf, topLevelOf } from "../git/repository.js";
import { withWorkingIndex } from "./working-index.js";

export type ChangeStatus = "added" | "modified" | "deleted" | "renamed";

/** One file of a session's changes; paths are relative to the repository's top. */
interface ChangedFile {
  readonly path: string;
  /** Where a renamed file was. */
  readonly oldPath?: string;
  readonly status: ChangeStatus;
  /** Lines added and removed (0 for a binary file). */
  readonly added: number;
  readonly removed: number;
  readonly binary: boolean;
}

export interface ChangeSet {
  /** The commit the changes are against. */
  readonly base: string;
  /** The checked-out commit (absent on a branch with no commit yet). */
  readonly head?: string;
  readonly files: readonly ChangedFile[];
  readonly totals: { readonly files: number; readonly added: number; readonly removed: number };
}

/** git's empty tree: the base of a repository with no commit yet. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** The options every diff of the changes is read with, whatever the user's git configuration. */
export const DIFF_OPTIONS = ["--cached", "-M", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none"];

/** The repository's top directory, or a refusal naming `cwd` when it is in none. */
export async function repositoryRoot(cwd: string): Promise<string> {
  const root = await topLevelOf(cwd);
  if (root === undefined)
    throw new ChangesError("not_a_git_repository", `the session's directory ${cwd} is not in a git repository, so it has no changes to show`);
  return root;
}

/** The commit `baseRef` names, or the empty tree when it is HEAD of a repository with no commit yet. */
export async function resolveBase(root: string, baseRef: string): Promise<{ base: string; head?: string }> {
  const head = await commitOf(root, "HEAD");
  const base = baseRef === "HEAD" ? head : await commitOf(root, baseRef);
  return { base: base ?? EMPTY_TREE, ...(head ? { head } : {}) };
}

/**
 * The base of a session in a worktree of its own: where its branch left the commit it started from
 * (`git merge-base`), so commits made on the branch count as its changes and later commits of the
 * base branch do not. A plain directory's base is `HEAD`.
 */
export async function mergeBase(cwd: string, branch: string, baseCommit: string): Promise<string> {
  return (await git(cwd, ["merge-base", branch, baseCommit])).trim();
}

/**
 * What changed in the directory `cwd` against `baseRef` (HEAD for a plain directory; a worktree
 * session's merge-base of its branch and base commit): committed, staged, unstaged and untracked
 * files that are not ignored, renames found by `-M`.
 */
export async function readChanges(cwd: string, baseRef = "HEAD"): Promise<ChangeSet> {
  return readChangesAt(await repositoryRoot(cwd), baseRef);
}

/** {@link readChanges} of the repository whose top is `root`. */
export async function readChangesAt(root: string, baseRef: string): Promise<ChangeSet> {
  const { base, head } = await resolveBase(root, baseRef);
  const files = await withWorkingIndex(root, (env) => diffFiles(root, base, env));
  const totals = { files: files.length, added: 0, removed: 0 };
  for (const file of files) {
    totals.added += file.added;
    totals.removed += file.removed;
  }
  return { base, ...(head ? { head } : {}), files, totals };
}

/** The changed files, with `env` naming a working index ({@link withWorkingIndex}). */
export async function diffFiles(root: string, base: string, env: Record<string, string>): Promise<ChangedFile[]> {
  const [names, counts] = await Promise.all([
    git(root, ["diff", ...DIFF_OPTIONS, "-z", "--name-status", base], { env }),
    git(root, ["diff", ...DIFF_OPTIONS, "-z", "--numstat", base], { env }),
  ]);
  const lineCounts = parseNumstat(counts);
  return parseNameStatus(names).map(({ path, oldPath, status }) => {
    const count = lineCounts.get(path);
    const binary = count === "binary";
    return {
      path,
      ...(oldPath ? { oldPath } : {}),
      status,
      added: binary || !count ? 0 : count.added,
      removed: binary || !count ? 0 : count.removed,
      binary,
    };
  });
}

/** `-z --name-status`: a status letter (R with a score), then one path, or two for a rename. */
function parseNameStatus(out: string): { path: string; oldPath?: string; status: ChangeStatus }[] {
  const fields = out.split("\0");
  const files: { path: string; oldPath?: string; status: ChangeStatus }[] = [];
  for (let i = 0; i + 1 < fields.length; ) {
    const letter = fields[i]![0];
    if (letter === "R" || letter === "C") {
      const oldPath = fields[i + 1]!;
      const path = fields[i + 2]!;
      files.push(letter === "R" ? { path, oldPath, status: "renamed" } : { path, status: "added" });
      i += 3;
      continue;
    }
    const path = fields[i + 1]!;
    // T (a file became a symlink or back) is a modification of that path.
    files.push({ path, status: letter === "A" ? "added" : letter === "D" ? "deleted" : "modified" });
    i += 2;
  }
  return files;
}

/** `-z --numstat`: `added\tremoved\tpath`, or `added\tremoved\t` then the old and new path of a rename; `-` counts for binary. */
function parseNumstat(out: string): Map<string, { added: number; removed: number } | "binary"> {
  const counts = new Map<string, { added: number; removed: number } | "binary">();
  const fields = out.split("\0");
  for (let i = 0; i < fields.length; i++) {
    const [added, removed, path] = fields[i]!.split("\t");
    if (added === undefined || removed === undefined || path === undefined) continue;
    let key = path;
    if (path === "") {
      key = fields[i + 2]!;
      i += 2;
    }
    counts.set(key, added === "-" ? "binary" : { added: Number(added), removed: Number(removed) });
  }
  return counts;
}
