import { tryGit } from "./git.js";

/** The top directory of the checkout `cwd` is in; undefined if it is in none (or in a bare repository). */
export async function topLevelOf(cwd: string): Promise<string | undefined> {
  const result = await tryGit(cwd, ["rev-parse", "--show-toplevel"]);
  return result.exitCode === 0 ? result.stdout.trim() : undefined;
}

/** The commit `ref` names (`HEAD`, `refs/heads/main`, a hash); undefined if it names none. */
export async function commitOf(cwd: string, ref: string): Promise<string | undefined> {
  const result = await tryGit(cwd, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
  return result.exitCode === 0 ? result.stdout.trim() : undefined;
}
