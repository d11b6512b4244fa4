import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const made: string[] = [];

/** A new temporary directory (its real path: git reports real paths); gone at {@link removeTempDirs}. */
export function tempDir(prefix = "berth-git-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** Removes every directory {@link tempDir} made (each test file's `afterEach`). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** git in `dir`, as a test runs it, with the test's own identity (set in the test repository only, never globally); its output, trimmed. */
export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0" },
  }).trim();
}

export function writeIn(dir: string, path: string, content: string | Buffer): void {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), content);
}

/** A repository in `dir` on branch main with `files` (default a README.md) as its first commit; `dir` back. */
export function initRepository(dir: string, files: Record<string, string | Buffer> = { "README.md": "the project\n" }): string {
  gitIn(dir, "init", "--quiet", "--initial-branch=main");
  gitIn(dir, "config", "user.name", "Berth Test");
  gitIn(dir, "config", "user.email", "test@berth.invalid");
  for (const [path, content] of Object.entries(files)) writeIn(dir, path, content);
  gitIn(dir, "add", "--all");
  gitIn(dir, "commit", "--quiet", "-m", "base");
  return dir;
}

/** A file committed on the checkout's current branch. */
export function commitFile(dir: string, path: string, content: string, message = `add ${path}`): void {
  writeIn(dir, path, content);
  gitIn(dir, "add", "--all");
  gitIn(dir, "commit", "--quiet", "-m", message);
}
