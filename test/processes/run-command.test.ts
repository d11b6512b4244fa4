import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isRunning, readProcStat } from "../../src/processes/proc-stat.js";
import { CommandStartError, runCommand } from "../../src/processes/run-command.js";
import { removeTempDirs, tempDir } from "../git/git-repository.js";
import { withBusyProgram, withHeldPipes } from "../support/hostile-commands.js";

afterEach(() => {
  removeTempDirs();
  vi.unstubAllEnvs();
});

describe("runCommand", () => {
  it("gives back what the command printed, as bytes, and its exit code whatever it is", async () => {
    const result = await runCommand("/bin/sh", ["-c", "printf 'out\\377'; echo err >&2; exit 3"], tempDir(), { maxOutputBytes: 1024 });
    expect(result).toEqual({ end: "exited", exitCode: 3, stdout: Buffer.from("out\xff", "latin1"), stderr: Buffer.from("err\n") });
  });

  it("past its output bound stops the whole group, a child it left behind too", async () => {
    // The shell starts a sleeper in its group, writes down its pid, then prints without end.
    const dir = tempDir();
    const result = await runCommand("/bin/sh", ["-c", "sleep 600 & echo $! > sleeper.pid; exec yes"], dir, { maxOutputBytes: 1024 * 1024 });
    expect(result.end).toBe("output_over_limit");
    expect(result.exitCode).toBeNull();
    expect(result.stdout.length).toBeLessThanOrEqual(1024 * 1024);
    const sleeper = Number(readFileSync(join(dir, "sleeper.pid"), "utf8"));
    await vi.waitFor(() => expect(isRunning(readProcStat(sleeper))).toBe(false));
  });

  it("a command that cannot start is a CommandStartError naming it and the directory", async () => {
    const dir = tempDir();
    const failed = runCommand("berth-no-such-command", [], dir, { maxOutputBytes: 1024 });
    await expect(failed).rejects.toBeInstanceOf(CommandStartError);
    await expect(failed).rejects.toMatchObject({ code: "ENOENT", message: expect.stringContaining(`cannot run berth-no-such-command in ${dir}`) });
  });

  it("an error spawn throws at once (a program open for writing: ETXTBSY) is a CommandStartError too", async () => {
    const dir = tempDir();
    await withBusyProgram(async (program) => {
      const failed = runCommand(program, [], dir, { maxOutputBytes: 1024 });
      await expect(failed).rejects.toBeInstanceOf(CommandStartError);
      await expect(failed).rejects.toMatchObject({ code: "ETXTBSY", message: expect.stringContaining(`cannot run ${program} in ${dir}`) });
    });
  });

  it("ends at its timeout, its group killed, even when a process of another session still holds its output", async () => {
    const result = await withHeldPipes((script) => runCommand("/bin/sh", ["-c", script], tempDir(), { timeoutMs: 1_000, maxOutputBytes: 1024 }));
    expect(result).toEqual({ end: "timed_out", exitCode: null, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) });
  });

  it("past its time stops the whole group, a child it left behind too, and keeps what was written before", async () => {
    const dir = tempDir();
    const result = await runCommand("/bin/sh", ["-c", "sleep 600 >/dev/null 2>&1 & echo $! > sleeper.pid; echo started; exec sleep 600"], dir, {
      timeoutMs: 3_000,
      maxOutputBytes: 1024,
    });
    expect(result).toMatchObject({ end: "timed_out", exitCode: null, stdout: Buffer.from("started\n") });
    const sleeper = Number(readFileSync(join(dir, "sleeper.pid"), "utf8"));
    await vi.waitFor(() => expect(isRunning(readProcStat(sleeper))).toBe(false));
  });

  it("reads what the command wrote before its time ran out, even when the host was too busy to read it then", async () => {
    const dir = tempDir();
    const started = Date.now();
    const running = runCommand("/bin/sh", ["-c", "sleep 0.3; echo 'the line that says why' >&2; touch written; exec sleep 600"], dir, {
      timeoutMs: 200,
      maxOutputBytes: 1024,
    });
    // The event loop is held (in its check phase) until the line is written and the timeout is past: the next phase to
    // run is the timers', so the group is killed before the pipe is read, and the line waits in it.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        while (!existsSync(join(dir, "written")) || Date.now() < started + 400) {
          if (Date.now() > started + 30_000) throw new Error("the command did not write its line within 30 s");
        }
        resolve();
      }),
    );
    expect(await running).toMatchObject({ end: "timed_out", stderr: Buffer.from("the line that says why\n") });
  });

  it("runs with the environment it is given, in place of the host's, and no input", async () => {
    vi.stubEnv("BERTH_TEST_HOST_ONLY", "host");
    const env = { PATH: process.env.PATH, BERTH_TEST_VALUE: "given" };
    const script = 'printf %s "$BERTH_TEST_VALUE:$BERTH_TEST_HOST_ONLY"';
    expect((await runCommand("/bin/sh", ["-c", script], tempDir(), { env, maxOutputBytes: 1024 })).stdout.toString()).toBe("given:");
    expect((await runCommand("/bin/sh", ["-c", script], tempDir(), { maxOutputBytes: 1024 })).stdout.toString()).toBe(":host");
    // With an open input, cat would wait for it for ever.
    expect(await runCommand("/bin/cat", [], tempDir(), { maxOutputBytes: 1024 })).toMatchObject({
      end: "exited",
      exitCode: 0,
      stdout: Buffer.alloc(0),
    });
  });

  it("keeps output of exactly its bound", async () => {
    expect(await runCommand("/bin/sh", ["-c", "printf abcd"], tempDir(), { maxOutputBytes: 4 })).toMatchObject({
      end: "exited",
      stdout: Buffer.from("abcd"),
    });
  });

  it("says a command a signal ended was signalled, with no exit code", async () => {
    expect(await runCommand("/bin/sh", ["-c", "kill -TERM $$"], tempDir(), { maxOutputBytes: 1024 })).toMatchObject({
      end: "signalled",
      exitCode: null,
    });
  });

  it("a command that cannot start in the host's own directory says so, and keeps the system's error", async () => {
    const failed = runCommand("berth-no-such-command", [], undefined, { maxOutputBytes: 1024 });
    await expect(failed).rejects.toMatchObject({
      name: "CommandStartError",
      message: expect.stringMatching(/^cannot run berth-no-such-command in the host's working directory: /),
      cause: expect.objectContaining({ code: "ENOENT" }),
    });
  });

  it("runs in the host's own directory when given none", async () => {
    const result = await runCommand("/bin/pwd", [], undefined, { maxOutputBytes: 1024 });
    expect(result.stdout.toString()).toBe(`${process.cwd()}\n`);
  });
});
