// The words under a sandboxed session's tool call whose write was refused outside what its sandbox lets it write.
import { describe, expect, it } from "vitest";
import { sandboxRefusalWords } from "../../web/src/chat/sandbox-refusal.js";

const writable = ["/work/project", "/home/ann/.cache"];
const words = (path: string) =>
  `This session is sandboxed: it may write only in /work/project, /home/ann/.cache. ${path} is outside, so the write was refused.`;

describe("a refused write in a sandboxed session, in words", () => {
  it.each([
    ["sh", "/bin/sh: 1: cannot create /home/ann/notes.txt: Read-only file system"],
    ["coreutils", "touch: cannot touch '/home/ann/notes.txt': Read-only file system"],
    ["Python", "OSError: [Errno 30] Read-only file system: '/home/ann/notes.txt'"],
    ["Node", "Error: EROFS: read-only file system, open '/home/ann/notes.txt'"],
    ["a refused permission", "mkdir: cannot create directory `/home/ann/notes.txt`: Permission denied"],
  ])("names the path outside, as %s says it", (_who, output) => {
    expect(sandboxRefusalWords(`building…\n${output}\n`, writable)).toBe(words("/home/ann/notes.txt"));
  });

  it("a path that merely begins like a writable one is outside it", () => {
    expect(sandboxRefusalWords("cannot create /work/project-old/a: Read-only file system", writable)).toBe(words("/work/project-old/a"));
  });

  it("says nothing of a refusal inside a writable place (the file's own permissions), of no refusal, or of one naming no path", () => {
    expect(sandboxRefusalWords("touch: cannot touch '/work/project/locked/a': Permission denied", writable)).toBeUndefined();
    expect(sandboxRefusalWords("wrote /home/ann/notes.txt", writable)).toBeUndefined();
    expect(sandboxRefusalWords("Read-only file system", writable)).toBeUndefined();
  });
});
