import { accessSync, constants, statSync } from "node:fs";
import { delimiter, resolve } from "node:path";

/** What `execvp` would say about a command: where it found it, or why it cannot run it. */
export type ExecutableLookup = { readonly path: string } | { readonly code: "ENOENT" | "EACCES" };

/** `execvp`'s fallback search path when the environment has no `PATH` (glibc's and libuv's). */
const DEFAULT_PATH = "/usr/bin:/bin";

/**
 * Looks `command` up as `execvp` would with the child's `PATH` and working directory: a name
 * with a `/` is taken as it is, any other is searched along `PATH` (an empty entry is the
 * working directory). EACCES when a candidate exists but cannot be executed and none can.
 * For a child started through a launcher, whose own exec failure would only be an exit code.
 */
export function findExecutable(command: string, cwd: string, pathVariable: string | undefined): ExecutableLookup {
  if (command === "") return { code: "ENOENT" };
  const candidates = command.includes("/")
    ? [resolve(cwd, command)]
    : // An empty entry adds nothing to the path, so it resolves to the working directory itself.
      (pathVariable ?? DEFAULT_PATH).split(delimiter).map((dir) => resolve(cwd, dir, command));
  let denied = false;
  for (const candidate of candidates) {
    let isFile: boolean;
    try {
      isFile = statSync(candidate).isFile();
    } catch {
      continue;
    }
    try {
      if (!isFile) throw new Error("not a file");
      accessSync(candidate, constants.X_OK);
      return { path: candidate };
    } catch {
      denied = true;
    }
  }
  return { code: denied ? "EACCES" : "ENOENT" };
}
