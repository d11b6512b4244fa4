import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";

/** Symlinks followed before giving up, as the kernel does (ELOOP). */
const MAX_SYMLINKS = 40;

/**
 * Where an absolute path really leads, with every symlink resolved, including
 * for a path that does not exist yet: its nearest existing ancestor is
 * resolved and the missing rest appended; a dangling symlink is followed to
 * where it points, since creating the file would create it there.
 */
export async function realLocation(path: string, symlinksLeft = MAX_SYMLINKS): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const entry = await lstat(path).catch((error: unknown) => {
    if (isMissing(error)) return undefined;
    throw error;
  });
  if (entry?.isSymbolicLink()) {
    if (symlinksLeft <= 0) throw Object.assign(new Error(`too many symbolic links: ${path}`), { code: "ELOOP" });
    return realLocation(resolve(dirname(path), await readlink(path)), symlinksLeft - 1);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await realLocation(parent, symlinksLeft), basename(path));
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}
