import { basename, join } from "node:path";

const MAX_SLUG = 40;

/** `Fix the login page!` → `fix-the-login-page`: lower-case letters and digits joined by dashes, at most 40; empty if none. */
export function slug(text: string): string {
  return text
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, MAX_SLUG)
    .replace(/^-+|-+$/g, "");
}

/** The branch a worktree session gets unless it names one: `berth/<slug of the title>`, else `berth/<short id>`. */
export function defaultBranch(title: string | undefined, sessionId: string): string {
  const fromTitle = title === undefined ? "" : slug(title);
  return `berth/${fromTitle || sessionId.slice(0, 8)}`;
}

/** `<root>/<repository's folder name>-<short id>`: one folder per session, its repository recognisable. */
export function worktreePath(root: string, repository: string, sessionId: string): string {
  return join(root, `${slug(basename(repository)) || "repository"}-${sessionId.slice(0, 8)}`);
}
