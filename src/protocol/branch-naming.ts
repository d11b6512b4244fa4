const MAX_SLUG = 40;

/**
 * `Fix the login page!` → `fix-the-login-page`: lower-case letters and digits joined by dashes, at most 40 (whole words); empty if none.
 * No Node imports: the dashboard shows the branch a title will make by this very rule.
 */
export function slug(text: string): string {
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

const PREFIX = "berth/";

/** `berth/<slug of the title>`; null for a title with no letter or digit to make one of. */
export function titleBranch(title: string | undefined): string | null {
  const fromTitle = title === undefined ? "" : slug(title);
  return fromTitle ? `${PREFIX}${fromTitle}` : null;
}

/** The branch a worktree session gets unless it names one: `berth/<slug of the title>`, else `berth/<short id>`. */
export function defaultBranch(title: string | undefined, sessionId: string): string {
  return titleBranch(title) ?? `${PREFIX}${sessionId.slice(0, 8)}`;
}
