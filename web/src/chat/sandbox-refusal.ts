/**
 * Why a sandboxed session's tool call could not write, in plain words: its output names a read-only file system
 * (`EROFS`) or a refused permission on a path outside what the sandbox leaves writable (docs/sandbox.md). A refusal
 * inside a writable path is the file's own permissions, not the sandbox: no words for it.
 */
export function sandboxRefusalWords(output: string, writable: readonly string[]): string | undefined {
  for (const line of output.split(/\r?\n/)) {
    const refused = REFUSED.exec(line);
    if (!refused) continue;
    const path = refusedPath(line, refused.index);
    if (path === undefined || writable.some((place) => within(path, place))) continue;
    return `This session is sandboxed: it may write only in ${writable.join(", ")}. ${path} is outside, so the write was refused.`;
  }
  return undefined;
}

/** How a refused write reads in a shell's, a runtime's or libc's words. */
const REFUSED = /read-only file system|\bEROFS\b|permission denied|\bEACCES\b/i;

/**
 * The path a refusal names: the last one before its words (`/bin/sh: 1: cannot create /home/a: Read-only file
 * system`), else the first after them (`Read-only file system: '/home/a'`, `EROFS: …, open '/home/a'`).
 */
function refusedPath(line: string, at: number): string | undefined {
  const paths = [...line.matchAll(/(?<![\w.~/-])\/[^\s'"`:,;()[\]]*/g)];
  const named = paths.filter((match) => match.index < at).at(-1) ?? paths.find((match) => match.index > at);
  return named === undefined ? undefined : named[0].replace(/\/+$/, "") || "/";
}

function within(path: string, place: string): boolean {
  return path === place || path.startsWith(place.endsWith("/") ? place : `${place}/`);
}
