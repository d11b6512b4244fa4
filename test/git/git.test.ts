import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { git, GitError } from "../../src/git/git.js";
import { classifyError } from "../../src/host/host-errors.js";
import { isRunning, readProcStat } from "../../src/processes/proc-stat.js";
import { gitIn, initRepository, removeTempDirs, tempDir } from "./git-repository.js";

afterEach(removeTempDirs);

describe("git", () => {
  it("runs in a process group of its own, never the host's", async () => {
    const repo = initRepository(tempDir());
    // A shell alias runs in git's process group: it prints that group's id.
    gitIn(repo, "config", "alias.group", "!cut -d' ' -f5 /proc/$$/stat");
    const group = Number((await git(repo, ["group"])).trim());
    expect(group).toBeGreaterThan(0);
    expect(group).not.toBe(readProcStat(process.pid)!.pgid);
  });

  it("past its time is stopped with everything it started, and says so", async () => {
    const repo = initRepository(tempDir());
    const pidFile = join(tempDir(), "sleeper.pid");
    // The alias leaves a grandchild that would outlive git if only git were killed.
    gitIn(repo, "config", "alias.hang", `!sleep 600 & echo $! > ${pidFile}; wait`);
    const failed = git(repo, ["hang"], { timeoutMs: 500 });
    await expect(failed).rejects.toMatchObject({ failure: "stopped", exitCode: null });
    await expect(failed).rejects.toThrow("git hang failed (stopped): git did not answer within 0.5 s and was stopped");
    const sleeper = Number(readFileSync(pidFile, "utf8"));
    await vi.waitFor(() => expect(isRunning(readProcStat(sleeper))).toBe(false));
  });

  it("refusing names the command, its exit code and git's message", async () => {
    const plain = tempDir();
    const failed = git(plain, ["rev-parse", "HEAD"]);
    await expect(failed).rejects.toMatchObject({ failure: "refused", exitCode: 128, args: ["rev-parse", "HEAD"] });
    await expect(failed).rejects.toThrow(/^git rev-parse HEAD failed \(exit code 128\): fatal: not a git repository/);
  });

  it("says git is not installed when it cannot be found, and a missing directory as missing", async () => {
    const failed = git(tempDir(), ["status"], { env: { PATH: tempDir() } });
    await expect(failed).rejects.toBeInstanceOf(GitError);
    await expect(failed).rejects.toMatchObject({ failure: "not_installed" });
    await expect(failed).rejects.toThrow("git is not installed on this host (Berth runs it for sessions' changes and worktrees)");
    const gone = join(tempDir(), "gone");
    await expect(git(gone, ["status"])).rejects.toMatchObject({ failure: "refused", stderr: `the directory ${gone} does not exist` });
  });

  it("reaches clients as git_failed: a refusal is the repository's (409), git missing or stopped the host's (503)", async () => {
    const refused = await git(tempDir(), ["rev-parse", "HEAD"]).catch((error: unknown) => error);
    expect(classifyError(refused)).toMatchObject({ class: "conflict", code: "git_failed" });
    const missing = await git(tempDir(), ["status"], { env: { PATH: tempDir() } }).catch((error: unknown) => error);
    expect(classifyError(missing)).toMatchObject({ class: "unavailable", code: "git_failed" });
  });
});
