import { stat } from "node:fs/promises";

/** What looking at a path found: a directory, nothing usable (absent, a file, not searchable), or no answer in time. */
export type DirectoryPresence = "directory" | "missing" | "unanswered";

/** How long a look at a directory waits (a network filesystem may hang). */
export const DIRECTORY_LOOK_TIMEOUT_MS = 2_000;
/**
 * Looks that did not answer in time hold one of the few threads file I/O and DNS lookups share (libuv's pool, four by
 * default) until the file system answers: past this many, no new look is started.
 */
export const MAX_HUNG_LOOKS = 2;

/** Looks under way, by path, until their `stat` returns: a caller meanwhile shares the look (and its answer). */
const looking = new Map<string, Promise<DirectoryPresence>>();
let hung = 0;

/** Looks at `path` without ever waiting more than {@link DIRECTORY_LOOK_TIMEOUT_MS}, nor piling up looks at a hung file system. */
export function lookAtDirectory(path: string): Promise<DirectoryPresence> {
  const underWay = looking.get(path);
  if (underWay) return underWay;
  if (hung >= MAX_HUNG_LOOKS) return Promise.resolve("unanswered");
  let late = false;
  const looked = stat(path).then(
    (stats) => (stats.isDirectory() ? ("directory" as const) : ("missing" as const)),
    () => "missing" as const,
  );
  void looked.finally(() => {
    looking.delete(path);
    if (late) hung--;
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"unanswered">(
    (resolve) =>
      (timer = setTimeout(() => {
        late = true;
        hung++;
        resolve("unanswered");
      }, DIRECTORY_LOOK_TIMEOUT_MS)),
  );
  const look = Promise.race([looked, timedOut]).finally(() => clearTimeout(timer));
  looking.set(path, look);
  return look;
}
