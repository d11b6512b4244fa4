import { basename, join } from "node:path";

const MAX_SLUG = 40;

/** `Fix the login page!` → `fix-the-login-page`: lower-case letters and digits joined by dashes, at most 40 (whole words); empty if none. */
function slug(text: string): string {
  const words = text
    .normalize("NFKD")
    // The accents NFKD split off their letters: é is e.
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (words.length <= MAX_SLUG) return words;
  // Cut after the last whole word that fits; a first word longer than that is cut itself.
  const cut = words.slice(0, MAX_SLUG + 1).replace(/-[^-]*$/, "");
  return cut.length <= MAX_SLUG ? cut : words.slice(0, MAX_SLUG);
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
