import { readFileSync } from "node:fs";

/**
 * Recipes in docs/host.md that tests run as written: the fenced block right after a
 * `<!-- recipe: NAME -->` line, so the page cannot drift from what works.
 */

const hostDoc = readFileSync(new URL("../../docs/host.md", import.meta.url), "utf8");

/** The fenced block right after `<!-- recipe: NAME -->` in docs/host.md. */
export function recipe(name: string): string {
  const match = new RegExp(`<!-- recipe: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(hostDoc);
  if (!match) throw new Error(`docs/host.md has no block marked <!-- recipe: ${name} -->`);
  return match[1]!;
}

/** What the documented examples call the local server: a loopback address with a port. */
export const documentedUrl = /http:\/\/127\.0\.0\.1:\d+/;
