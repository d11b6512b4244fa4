import { CodedError } from "../protocol/coded-error.js";
import type { ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest } from "@agentclientprotocol/sdk";
import { constants, realpathSync, statSync, type BigIntStats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { isAbsolute, resolve, sep } from "node:path";
import { realLocation } from "./real-location.js";

const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

export type FileAccessErrorCode =
  | "not_absolute"
  | "invalid_request"
  | "outside_roots"
  | "root_replaced"
  | "not_found"
  | "is_directory"
  | "not_a_file"
  | "too_large"
  | "permission_denied"
  | "io_error";

/** A refused or failed `fs/*` request; `code` says which rule or failure, the message names the path. */
export class FileAccessError extends CodedError<FileAccessErrorCode> {
  override readonly name = "FileAccessError";
}

export interface FileAccessOptions {
  /** The session's location directory and its additional directories; absolute, existing. */
  readonly roots: readonly string[];
  /** The largest file read or written (default 16 MiB). */
  readonly maxFileBytes?: number;
}

export type ReadTextFileParams = Pick<ReadTextFileRequest, "path" | "line" | "limit">;
export type WriteTextFileParams = Pick<WriteTextFileRequest, "path" | "content">;

// No symlink as the last component (one swapped in after the check), and no blocking open of a FIFO.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** How often a path that changed between the check and the open is checked again before giving up. */
const OPEN_ATTEMPTS = 3;

/** A root directory: its real path, and the file it was when the session's file access was made. */
interface Root {
  readonly path: string;
  readonly dev: bigint;
  readonly ino: bigint;
}

/**
 * ACP's `fs/read_text_file` and `fs/write_text_file` answered on the host,
 * confined to the session's directories: a path is followed through `..` and
 * every symlink, and refused unless where it really leads is inside a root.
 *
 * The check and the open are one: the checked real path is opened from its root's directory
 * handle one component at a time, each with `O_NOFOLLOW` and relative to the directory opened
 * before it (`/proc/self/fd/<fd>/<name>`, Node's stand-in for `openat`). A directory swapped
 * for a symlink after the check is met as a symlink and never followed: the request is checked
 * again from the start, and refused if it now leads outside. The root itself is opened with
 * `O_NOFOLLOW` and must still be the directory (device and inode) it was when this was made:
 * a location directory moved away and replaced (by a symlink to outside, or anything else)
 * is refused, not walked.
 */
export class FileAccess {
  /** The roots with their symlinks resolved, as paths are compared against them. */
  private readonly roots: readonly Root[];
  private readonly maxFileBytes: number;

  constructor(options: FileAccessOptions) {
    if (options.roots.length === 0) throw new Error("file access needs at least one root directory");
    this.roots = options.roots.map(realRoot);
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    if (!Number.isSafeInteger(this.maxFileBytes) || this.maxFileBytes <= 0) {
      throw new Error(`maxFileBytes must be a positive integer, got ${JSON.stringify(options.maxFileBytes)}`);
    }
  }

  /** The file's text, or `limit` lines of it from the 1-based `line`, each with its line ending. */
  async readTextFile(params: ReadTextFileParams): Promise<ReadTextFileResponse> {
    const line = optionalCount(params.line, "line", 1);
    const limit = optionalCount(params.limit, "limit", 0);
    const handle = await this.openConfined(params.path, READ_FLAGS);
    try {
      await this.assertReadableSize(handle, params.path);
      const bytes = await handle.readFile();
      if (bytes.length > this.maxFileBytes) throw this.tooLarge(params.path, bytes.length);
      return { content: selectLines(bytes.toString("utf8"), line, limit) };
    } catch (error) {
      throw asFileAccessError(error, params.path);
    } finally {
      await handle.close();
    }
  }

  /** Creates or overwrites the file; its directory must exist and be inside. */
  async writeTextFile(params: WriteTextFileParams): Promise<void> {
    if (typeof params.content !== "string") {
      throw new FileAccessError("invalid_request", `content for ${JSON.stringify(params.path)} must be a string`);
    }
    const size = Buffer.byteLength(params.content, "utf8");
    if (size > this.maxFileBytes) throw this.tooLarge(params.path, size);
    const handle = await this.openConfined(params.path, WRITE_FLAGS).catch((error: unknown) => {
      // With O_CREAT only a missing directory is missing.
      if (error instanceof FileAccessError && error.code === "not_found") {
        const message = `the directory of ${JSON.stringify(params.path)} does not exist`;
        throw new FileAccessError("not_found", message, { cause: error.cause });
      }
      throw error;
    });
    try {
      assertRegularFile(await handle.stat(), params.path);
      // Truncated only once it is known to be a file inside: a refused request changes nothing.
      await handle.truncate(0);
      await handle.writeFile(params.content, "utf8");
    } catch (error) {
      throw asFileAccessError(error, params.path);
    } finally {
      await handle.close();
    }
  }

  /** Checks `path` and opens where it leads beneath its root, with no symlink followed on the way. */
  private async openConfined(path: unknown, flags: number): Promise<FileHandle> {
    for (let attempt = 1; ; attempt++) {
      const { root, real } = await this.confine(path);
      try {
        return await openBeneath(root, real, flags);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // ELOOP: a component became a symlink after the check; ENOTDIR: a directory became something else.
        const changed = code === "ELOOP" || code === "ENOTDIR";
        if (!changed || attempt >= OPEN_ATTEMPTS) {
          if (code === "ELOOP") {
            throw new FileAccessError("io_error", `path ${JSON.stringify(path)} kept changing while it was opened (a symlink appeared in it)`, {
              cause: error,
            });
          }
          throw asFileAccessError(error, path as string);
        }
      }
    }
  }

  /**
   * Refuses `path` as a read or write of it would be refused for where it leads (outside the roots, not absolute):
   * the same confinement for a request another file system (the prompting client's) answers. Returns the real path
   * that was checked, the one to hand that file system: the agent's own path may mean elsewhere to it (`link/..`
   * is tidied as text here, while the kernel follows `link` first).
   */
  async checkConfined(path: unknown): Promise<string> {
    return (await this.confine(path)).real;
  }

  /** Where `path` really leads, and the root it is inside, if it is inside one. */
  private async confine(path: unknown): Promise<{ root: Root; real: string }> {
    if (typeof path !== "string" || path.length === 0) {
      throw new FileAccessError("invalid_request", `path must be a non-empty string, got ${JSON.stringify(path)}`);
    }
    const named = JSON.stringify(path);
    if (path.includes("\0")) throw new FileAccessError("invalid_request", `path ${named} contains a NUL byte`);
    if (!isAbsolute(path)) {
      throw new FileAccessError("not_absolute", `path ${named} is not absolute; file requests need an absolute path`);
    }
    const absolute = resolve(path);
    let real: string;
    try {
      real = await realLocation(absolute);
    } catch (error) {
      throw asFileAccessError(error, path);
    }
    // The innermost root, so the walk below it is as short as it can be.
    const root = this.roots.filter((candidate) => isInside(real, candidate.path)).sort((a, b) => b.path.length - a.path.length)[0];
    if (root === undefined) {
      const leadsTo = real === path ? "" : ` (it leads to ${real})`;
      const roots = this.roots.map((candidate) => candidate.path).join(", ");
      throw new FileAccessError("outside_roots", `path ${named} is outside the session's directories (${roots})${leadsTo}`);
    }
    return { root, real };
  }

  private async assertReadableSize(handle: FileHandle, path: string): Promise<void> {
    const stats = await handle.stat();
    assertRegularFile(stats, path);
    if (stats.size > this.maxFileBytes) throw this.tooLarge(path, stats.size);
  }

  private tooLarge(path: string, size: number): FileAccessError {
    const message = `file ${JSON.stringify(path)} is too large: ${size} bytes, the limit is ${this.maxFileBytes}`;
    return new FileAccessError("too_large", message);
  }
}

function realRoot(root: string): Root {
  if (!isAbsolute(root)) throw new Error(`root directory must be an absolute path, got ${JSON.stringify(root)}`);
  let real: string;
  try {
    real = realpathSync(root);
  } catch {
    throw new Error(`root directory does not exist: ${root}`);
  }
  const stats = statSync(real, { bigint: true });
  if (!stats.isDirectory()) throw new Error(`root directory is not a directory: ${root}`);
  return { path: real, dev: stats.dev, ino: stats.ino };
}

function isInside(path: string, root: string): boolean {
  return root === sep || path === root || path.startsWith(root + sep);
}

/**
 * Opens `real` (a path with no symlink in it, inside `root`) walking down from `root`: each
 * directory is opened with `O_DIRECTORY | O_NOFOLLOW` relative to the one before it, through
 * `/proc/self/fd/<fd>/<name>` (the kernel resolves `<name>` in the already-open directory, as
 * `openat` would), and the last component with `flags | O_NOFOLLOW`. A symlink anywhere fails
 * with ELOOP (or ENOTDIR) instead of being followed out of the root.
 */
async function openBeneath(root: Root, real: string, flags: number): Promise<FileHandle> {
  const names = real === root.path ? [] : real.slice(root.path === sep ? 1 : root.path.length + 1).split(sep);
  const last = names.pop();
  let dir = await openRoot(root, real);
  try {
    if (last === undefined) return await open(`/proc/self/fd/${dir.fd}`, flags & ~constants.O_CREAT & ~constants.O_NOFOLLOW);
    for (const name of names) {
      const next = await open(`/proc/self/fd/${dir.fd}/${name}`, DIRECTORY_FLAGS);
      await dir.close();
      dir = next;
    }
    return await open(`/proc/self/fd/${dir.fd}/${last}`, flags | constants.O_NOFOLLOW, 0o666);
  } finally {
    await dir.close();
  }
}

/**
 * The root's directory, opened by its path: only if that path still leads to the directory the
 * root was (a parent swapped, or the root moved away and replaced, leads somewhere else).
 */
async function openRoot(root: Root, real: string): Promise<FileHandle> {
  const dir = await open(root.path, DIRECTORY_FLAGS).catch((error: unknown) => {
    // A symlink now (ENOTDIR with O_DIRECTORY, ELOOP without), or a file: not the directory it was.
    const code = (error as NodeJS.ErrnoException).code;
    throw code === "ENOTDIR" || code === "ELOOP" ? rootReplaced(root, real, error) : error;
  });
  let stats: BigIntStats;
  try {
    stats = await dir.stat({ bigint: true });
  } catch (error) {
    await dir.close();
    throw error;
  }
  if (stats.dev !== root.dev || stats.ino !== root.ino) {
    await dir.close();
    throw rootReplaced(root, real);
  }
  return dir;
}

function rootReplaced(root: Root, real: string, cause?: unknown): FileAccessError {
  const message = `${JSON.stringify(real)} is refused: the session's directory ${root.path} is no longer the directory it was when the session started (it was moved or replaced)`;
  return new FileAccessError("root_replaced", message, { cause });
}

function assertRegularFile(stats: { isDirectory(): boolean; isFile(): boolean }, path: string): void {
  const named = JSON.stringify(path);
  if (stats.isDirectory()) throw new FileAccessError("is_directory", `path ${named} is a directory, not a file`);
  if (!stats.isFile()) throw new FileAccessError("not_a_file", `path ${named} is not a regular file`);
}

/** A system error as a {@link FileAccessError} naming the path; refusals pass through unchanged. */
function asFileAccessError(error: unknown, path: string): FileAccessError {
  if (error instanceof FileAccessError) return error;
  const { code, message } = error as NodeJS.ErrnoException;
  const named = JSON.stringify(path);
  switch (code) {
    case "ENOENT":
      return new FileAccessError("not_found", `file ${named} does not exist`, { cause: error });
    case "ENOTDIR":
      return new FileAccessError("not_found", `a parent of ${named} is not a directory`, { cause: error });
    case "EISDIR":
      return new FileAccessError("is_directory", `path ${named} is a directory, not a file`, { cause: error });
    case "ENXIO":
      return new FileAccessError("not_a_file", `path ${named} is not a regular file`, { cause: error });
    case "EACCES":
    case "EPERM":
      return new FileAccessError("permission_denied", `permission denied for ${named}`, { cause: error });
    default:
      return new FileAccessError("io_error", `cannot access ${named}: ${message}`, { cause: error });
  }
}

function optionalCount(value: number | null | undefined, name: string, min: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isSafeInteger(value) || value < min) {
    const message = `${name} must be a whole number of at least ${min}, got ${JSON.stringify(value)}`;
    throw new FileAccessError("invalid_request", message);
  }
  return value;
}

/** Lines `line ..< line + limit` (1-based), each keeping its line ending; empty past the end. */
function selectLines(text: string, line: number | undefined, limit: number | undefined): string {
  let start = 0;
  for (let skipped = 1; skipped < (line ?? 1); skipped++) {
    const newline = text.indexOf("\n", start);
    if (newline === -1) return "";
    start = newline + 1;
  }
  if (limit === undefined) return text.slice(start);
  let end = start;
  for (let taken = 0; taken < limit; taken++) {
    const newline = text.indexOf("\n", end);
    if (newline === -1) return text.slice(start);
    end = newline + 1;
  }
  return text.slice(start, end);
}
