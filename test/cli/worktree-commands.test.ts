import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliMain, serveOnTempDir } from "../server/serve-process.js";
import { commitFile, gitIn, initRepository } from "../git/git-repository.js";

let serve: Awaited<ReturnType<typeof serveOnTempDir>>;
const dirs: string[] = [];

/** `berth <args>` in `cwd`, `input` on its stdin; what it printed and its exit code. */
function berth(cwd: string, args: readonly string[], input = ""): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const child = spawn(process.execPath, [cliMain, ...args, "--data-dir", serve.dataDir], {
    cwd,
    env: { ...process.env, XDG_CONFIG_HOME: serve.dataDir },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.once("close", (code) => resolve({ stdout, stderr, code })));
}

function repository(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "berth-cli-repo-")));
  dirs.push(dir);
  return initRepository(dir);
}

beforeAll(async () => {
  serve = await serveOnTempDir();
});

afterAll(async () => {
  await serve.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("berth new --worktree, berth land, berth discard", () => {
  it("new prints the session and its worktree; land commits, merges into the base and removes the worktree", async () => {
    const repo = repository();
    const made = await berth(repo, ["new", "--worktree", "--title", "Add notes"]);
    expect(made.code, made.stderr).toBe(0);
    const [id, where] = made.stdout.trim().split("\n");
    const path = /^worktree (\/\S+) \(branch berth\/add-notes from main\)$/.exec(where!)![1]!;
    expect(path.startsWith(join(serve.dataDir, "worktrees"))).toBe(true);
    writeFileSync(join(path, "notes.txt"), "remember\n");

    const landed = await berth(repo, ["land", id!, "-m", "Notes"]);
    expect(landed.code, landed.stderr).toBe(0);
    expect(landed.stdout).toBe(`landed berth/add-notes into main at ${gitIn(repo, "rev-parse", "main")} in ${repo}\n`);
    expect(readFileSync(join(repo, "notes.txt"), "utf8")).toBe("remember\n");
    expect(gitIn(repo, "log", "--format=%s", "main^2", "-1")).toBe("Notes");
    expect(existsSync(path)).toBe(false);
  });

  it("land prints a failing check's output and exits 1; discard asks first, and --yes does not", async () => {
    const repo = repository();
    mkdirSync(join(repo, ".berth"));
    commitFile(repo, ".berth/check", "#!/bin/sh\necho 'three tests failed'\nexit 1\n");
    chmodSync(join(repo, ".berth", "check"), 0o755);
    gitIn(repo, "commit", "--quiet", "-am", "the check is executable");
    const made = await berth(repo, ["new", repo, "--worktree", "--branch", "try"]);
    expect(made.code, made.stderr).toBe(0);
    const [id, where] = made.stdout.trim().split("\n");
    const path = /^worktree (\/\S+) /.exec(where!)![1]!;

    const refused = await berth(repo, ["land", id!]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^berth land: the check \(\.berth\/check\) failed with exit code 1: nothing was merged\nthree tests failed\n$/);

    const kept = await berth(repo, ["discard", id!], "n\n");
    expect(kept.code).toBe(1);
    expect(kept.stdout).toBe(`Discard ${path} and branch try, with everything in them? [y/N] `);
    expect(kept.stderr).toBe("berth discard: nothing was discarded\n");
    expect(existsSync(path)).toBe(true);

    const discarded = await berth(repo, ["discard", id!, "--yes"]);
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(discarded.stdout).toBe(`discarded ${path} and branch try\n`);
    expect(existsSync(path)).toBe(false);
    expect(gitIn(repo, "branch", "--list", "try")).toBe("");
  });

  it("--base without --worktree is a usage error (exit 2); a directory in no git checkout is refused by the host (exit 1)", async () => {
    const repo = repository();
    const usage = await berth(repo, ["new", "--base", "main"]);
    expect(usage).toMatchObject({ code: 2, stderr: "berth new: --base and --branch go with --worktree\n" });
    const plain = realpathSync(mkdtempSync(join(tmpdir(), "berth-cli-plain-")));
    dirs.push(plain);
    const refused = await berth(plain, ["new", "--worktree"]);
    expect(refused).toMatchObject({ code: 1, stderr: `berth new: ${plain} is not in a git repository\n` });
  });
});
