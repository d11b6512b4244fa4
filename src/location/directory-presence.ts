import { stat } from "node:fs/promises";

/** What looking at a path found: a directory, nothing usable (absent, a file, not readable), or no answer in time. */
export type DirectoryPresence = "directory" | "missing" | "unanswered";

/** How long a look at a directory waits (a network filesystem may hang). */
export const DIRECTORY_LOOK_TIMEOUT_MS = 2_000;

/** Looks at `path` without ever waiting more than {@link DIRECTORY_LOOK_TIMEOUT_MS}. */
export async function lookAtDirectory(path: string): Promise<DirectoryPresence> {
  let timer: NodeJS.Timeout | undefined;
  const looked = stat(path).then(
    (stats) => (stats.isDirectory() ? ("directory" as const) : ("missing" as const)),
    () => "missing" as const,
  );
  const late = new Promise<"unanswered">((resolve) => (timer = setTimeout(() => resolve("unanswered"), DIRECTORY_LOOK_TIMEOUT_MS)));
  return Promise.race([looked, late]).finally(() => clearTimeout(timer));
}
