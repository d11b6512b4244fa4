import { basename, join } from "node:path";
import { slug } from "../protocol/branch-naming.js";

/** `<root>/<repository's folder name>-<short id>`: one folder per session, its repository recognisable. */
export function worktreePath(root: string, repository: string, sessionId: string): string {
  return join(root, `${slug(basename(repository)) || "repository"}-${sessionId.slice(0, 8)}`);
}
