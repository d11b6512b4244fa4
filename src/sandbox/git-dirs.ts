import { readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/**
 * The git directories a session at `directory` writes when it commits: the repository's `.git` above it, or, in a
 * linked worktree (`.git` a file naming its own git directory), that directory and the repository's common one,
 * where objects and refs live. None outside a repository. A commit in a sandbox fails without them.
 */
export function gitDirsOf(directory: string): string[] {
  for (let dir = directory; ; dir = dirname(dir)) {
    const dotGit = join(dir, ".git");
    const kind = kindOf(dotGit);
    if (kind === "directory") return [dotGit];
    if (kind === "file") return linkedGitDirs(dotGit);
    if (dirname(dir) === dir) return [];
  }
}

function kindOf(path: string): "directory" | "file" | "none" {
  try {
    const stats = statSync(path);
    return stats.isDirectory() ? "directory" : stats.isFile() ? "file" : "none";
  } catch {
    return "none";
  }
}

/** `gitdir: <path>` in a worktree's `.git` file, and the `commondir` that git directory names. */
function linkedGitDirs(dotGitFile: string): string[] {
  const gitDir = /^gitdir: (.+)$/m.exec(readText(dotGitFile))?.[1]?.trim();
  if (!gitDir) return [];
  const own = resolve(dirname(dotGitFile), gitDir);
  const common = readText(join(own, "commondir")).trim();
  return common ? [own, resolve(own, common)] : [own];
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
