import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { git } from "../git/git.js";

/**
 * Runs `use` with a throwaway index that holds the working tree as it is (tracked edits, deletions
 * and untracked files that are not ignored), so one `git diff --cached` sees everything the
 * agent changed, renames of files it never `git add`ed included. The repository's own index is
 * copied (its stat data spares re-hashing unchanged files), never written.
 */
export async function withWorkingIndex<T>(root: string, use: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "berth-changes-"));
  try {
    const env = { GIT_INDEX_FILE: join(dir, "index") };
    const indexPath = (await git(root, ["rev-parse", "--git-path", "index"])).trim();
    const own = isAbsolute(indexPath) ? indexPath : join(root, indexPath);
    if (existsSync(own)) copyFileSync(own, env.GIT_INDEX_FILE);
    await git(root, ["add", "--all", "--", "."], { env });
    return await use(env);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
