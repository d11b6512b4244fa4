import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** git in `cwd`, as a test runs it; its output, trimmed. */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } }).trim();
}

/** A git repository in `dir` on branch main with one commit (README.md); its identity set in the repository only. */
export function initRepository(dir: string): string {
  gitIn(dir, "init", "--quiet", "--initial-branch=main");
  gitIn(dir, "config", "user.name", "Berth Test");
  gitIn(dir, "config", "user.email", "test@berth.invalid");
  writeFileSync(join(dir, "README.md"), "the project\n");
  gitIn(dir, "add", "-A");
  gitIn(dir, "commit", "--quiet", "-m", "first");
  return dir;
}

/** A file committed on the checkout's current branch. */
export function commitFile(dir: string, path: string, content: string, message = `add ${path}`): void {
  writeFileSync(join(dir, path), content);
  gitIn(dir, "add", "-A");
  gitIn(dir, "commit", "--quiet", "-m", message);
}
