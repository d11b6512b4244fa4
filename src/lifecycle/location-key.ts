import { posix } from "node:path";

/** Where work happens: a canonical absolute directory plus an optional workspace id. */
export interface LocationKey {
  readonly directory: string;
  readonly workspace: string | undefined;
  /** A string equal for two keys exactly when they name the same location. */
  readonly id: string;
}

export class InvalidLocationError extends Error {
  override readonly name = "InvalidLocationError";
}

/** `/w/app/`, `/w/./app` and `/w//app` all become `/w/app`; the root stays `/`. */
export function canonicalDirectory(directory: string): string {
  if (typeof directory !== "string" || directory.length === 0) {
    throw new InvalidLocationError("location directory must be a non-empty absolute path");
  }
  if (directory.includes("\0")) throw new InvalidLocationError("location directory contains a NUL byte");
  if (!posix.isAbsolute(directory)) {
    throw new InvalidLocationError(`location directory must be absolute, got relative path "${directory}"`);
  }
  const normalized = posix.normalize(directory);
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

export function locationKey(directory: string, workspace?: string | null): LocationKey {
  const dir = canonicalDirectory(directory);
  if (workspace !== undefined && workspace !== null && (typeof workspace !== "string" || workspace.length === 0)) {
    throw new InvalidLocationError("workspace id must be a non-empty string when given");
  }
  const ws = workspace ?? undefined;
  // NUL cannot occur in a path, so it separates the two parts unambiguously.
  return { directory: dir, workspace: ws, id: ws === undefined ? dir : `${dir}\0${ws}` };
}

/** For log lines and messages: `/w/app` or `/w/app [workspace a]`. */
export function describeLocation(key: LocationKey): string {
  return key.workspace === undefined ? key.directory : `${key.directory} [workspace ${key.workspace}]`;
}
