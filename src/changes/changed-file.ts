import { isAbsolute, posix } from "node:path";
import { DIFF_OPTIONS, diffFiles, readChangesAt, repositoryRoot, resolveBase, type ChangeStatus } from "./change-set.js";
import { ChangesError } from "./changes-error.js";
import { git, gitBytes } from "../git/git.js";
import { withWorkingIndex } from "./working-index.js";

/** Each text and the patch are cut past this many bytes (at a line's end): a page renders it, a megabyte would freeze it. */
const TEXT_LIMIT_BYTES = 256 * 1024;
/** A file past this is not read at all: its text is empty and `cut` says how big it is. */
const READ_LIMIT_BYTES = 16 * 1024 * 1024;

/** The full size in bytes of each part that was cut to {@link TEXT_LIMIT_BYTES}. */
interface CutParts {
  readonly limitBytes: number;
  readonly oldBytes?: number;
  readonly newBytes?: number;
  readonly patchBytes?: number;
}

export interface ChangedFileView {
  readonly path: string;
  readonly oldPath?: string;
  readonly status: ChangeStatus;
  readonly binary: boolean;
  /** The base's text; null for an added or binary file. */
  readonly oldText: string | null;
  /** The working tree's text; null for a deleted or binary file. */
  readonly newText: string | null;
  /** The unified patch (`git diff` against the base), "Binary files … differ" for a binary file. */
  readonly patch: string;
  /** Absent when nothing was cut. */
  readonly cut?: CutParts;
}

/**
 * A repository-relative path as a request may name it: no absolute path, no `..`, nothing a
 * shell or git would read another way. Refused with the path named.
 */
export function checkedPath(path: string): string {
  if (path === "" || path.includes("\0")) throw new ChangesError("invalid_path", `path must be a non-empty file path, got ${JSON.stringify(path)}`);
  if (isAbsolute(path) || posix.isAbsolute(path))
    throw new ChangesError("invalid_path", `path must be relative to the repository, got the absolute path ${JSON.stringify(path)}`);
  const normal = posix.normalize(path);
  if (normal === ".." || normal.startsWith("../") || path.split(/[\\/]/).includes(".."))
    throw new ChangesError("invalid_path", `path ${JSON.stringify(path)} leaves the repository ("..")`);
  return normal;
}

/**
 * A comment's `path` as the changes name it: checked as {@link checkedPath}, and among the changed
 * files (for a line of the base's text, a renamed file's old path counts too). Refused by name.
 */
export async function commentablePath(cwd: string, path: string, side: "new" | "old", baseRef = "HEAD"): Promise<string> {
  const wanted = checkedPath(path);
  const { files } = await readChangesAt(await repositoryRoot(cwd), baseRef);
  if (!files.some((file) => file.path === wanted || (side === "old" && file.oldPath === wanted)))
    throw new ChangesError("path_not_in_changes", `path ${JSON.stringify(path)} is not among the session's changed files`);
  return wanted;
}

/** One file of the changes of `cwd` against `baseRef`: both texts and the patch, each cut to the limit. */
export async function readChangedFile(cwd: string, path: string, baseRef = "HEAD"): Promise<ChangedFileView> {
  const wanted = checkedPath(path);
  const root = await repositoryRoot(cwd);
  const { base } = await resolveBase(root, baseRef);
  // One working index for the list and the file's reads: the file is read as the list found it.
  return withWorkingIndex(root, async (env) => {
    const file = (await diffFiles(root, base, env)).find((candidate) => candidate.path === wanted);
    if (!file) throw new ChangesError("path_not_in_changes", `path ${JSON.stringify(path)} is not among the session's changed files`);
    const oldPath = file.oldPath ?? file.path;
    const cut: { -readonly [K in keyof CutParts]: CutParts[K] } = { limitBytes: TEXT_LIMIT_BYTES };
    const readSide = async (object: string, side: "oldBytes" | "newBytes"): Promise<string> => {
      const size = Number(await git(root, ["cat-file", "-s", object], { env }));
      if (size > READ_LIMIT_BYTES) {
        cut[side] = size;
        return "";
      }
      const { text, cutFrom } = cutText(await gitBytes(root, ["cat-file", "blob", object], { env }));
      if (cutFrom !== undefined) cut[side] = cutFrom;
      return text;
    };
    // Both sides from git's objects, the new one from the working index: a symlink shows its target's name, never the file it points to.
    const oldText = file.binary || file.status === "added" ? null : await readSide(`${base}:${oldPath}`, "oldBytes");
    const newText = file.binary || file.status === "deleted" ? null : await readSide(`:${file.path}`, "newBytes");
    // A side too big to read has no patch either (git would hold all of it in memory): `cut` names its size.
    const unread = (cut.oldBytes ?? 0) > READ_LIMIT_BYTES || (cut.newBytes ?? 0) > READ_LIMIT_BYTES;
    const diffArgs = ["diff", ...DIFF_OPTIONS, "--src-prefix=a/", "--dst-prefix=b/", base, "--", ...new Set([oldPath, file.path])];
    const patch = unread ? { text: "" } : cutText(await gitBytes(root, diffArgs, { env }));
    if (patch.cutFrom !== undefined) cut.patchBytes = patch.cutFrom;
    return {
      path: file.path,
      ...(file.oldPath ? { oldPath: file.oldPath } : {}),
      status: file.status,
      binary: file.binary,
      oldText,
      newText,
      patch: patch.text,
      ...(Object.keys(cut).length > 1 ? { cut } : {}),
    };
  });
}

/** The first {@link TEXT_LIMIT_BYTES} bytes up to the last whole line; `cutFrom` is the full size when cut. */
function cutText(bytes: Buffer): { text: string; cutFrom?: number } {
  if (bytes.length <= TEXT_LIMIT_BYTES) return { text: bytes.toString("utf8") };
  const head = bytes.subarray(0, TEXT_LIMIT_BYTES);
  const lineEnd = head.lastIndexOf(0x0a);
  return { text: head.subarray(0, lineEnd >= 0 ? lineEnd + 1 : TEXT_LIMIT_BYTES).toString("utf8"), cutFrom: bytes.length };
}
