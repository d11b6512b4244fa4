import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { outputFilePath } from "../../src/location/terminal-output-files.js";
import { Terminals, type TerminalsOptions } from "../../src/location/terminals.js";
import { InMemoryProcessGroupLedger, type LedgerEntry } from "../../src/processes/ledger.js";
import { groupMembers, killLeftovers, processIsRunning, startedProcess, waitUntil, type StartedProcess } from "../support/process-table.js";

let root: string;
let directory: string;
let outputDir: string;
const opened: Terminals[] = [];
const started: StartedProcess[] = [];

/** A ledger that also remembers every group it was ever told about, so a test can check on them. */
class WatchingLedger extends InMemoryProcessGroupLedger {
  readonly everAdded: LedgerEntry[] = [];

  override add(group: LedgerEntry): void {
    super.add(group);
    this.everAdded.push(group);
    started.push(startedProcess(group.pgid));
  }
}

function terminalsWith(options: Partial<TerminalsOptions> = {}): { terminals: Terminals; ledger: WatchingLedger } {
  const ledger = new WatchingLedger();
  const terminals = new Terminals({ directory, outputDir, ledger, stop: { graceMs: 2_000 }, ...options });
  opened.push(terminals);
  return { terminals, ledger };
}

/**
 * The running processes of a terminal's group, checked to include its leader
 * and the grandchild it reported, and remembered for clean-up.
 */
function runningMembers(pgid: number, grandchild: number): StartedProcess[] {
  const members = groupMembers(pgid);
  started.push(...members);
  expect(members.map(({ pid }) => pid)).toEqual(expect.arrayContaining([pgid, grandchild]));
  return members;
}

/** Waits until the terminal printed `lines` full lines and returns them. */
async function printedLines(terminals: Terminals, terminalId: string, lines: number): Promise<string[]> {
  await waitUntil(() => terminals.output(terminalId).output.split("\n").length > lines, `terminal ${terminalId} printed ${lines} line(s)`);
  return terminals.output(terminalId).output.split("\n").slice(0, lines);
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "berth-terminals-"));
  directory = realpathSync(mkdtempSync(join(root, "location-")));
  outputDir = join(root, "output");
});

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((terminals) => terminals.closeAll()));
  killLeftovers(started.splice(0));
  rmSync(root, { recursive: true, force: true });
});

describe("Terminals: stopping process groups", () => {
  const script = "sleep 3600 & echo $!; sleep 3600";

  it("stop ends the shell and its background grandchild, and keeps the output readable", async () => {
    const { terminals, ledger } = terminalsWith();
    const id = await terminals.create({ sessionId: "s1", command: "sh", args: ["-c", script] });
    const grandchild = Number((await printedLines(terminals, id, 1))[0]);
    const [group] = ledger.list();
    expect(group).toMatchObject({ kind: "terminal", label: `sh -c ${script}` });
    const members = runningMembers(group!.pgid, grandchild);

    expect(await terminals.stop(id)).toEqual({ exitCode: null, signal: "SIGTERM" });

    for (const { pid } of members) expect(processIsRunning(pid)).toBe(false);
    expect(terminals.output(id)).toEqual({
      output: `${grandchild}\n`,
      truncated: false,
      exitStatus: { exitCode: null, signal: "SIGTERM" },
    });
    expect(await terminals.waitForExit(id)).toEqual({ exitCode: null, signal: "SIGTERM" });
    expect(ledger.list()).toEqual([]);
  });

  it("a terminal is unknown to another session of the location that asks for it, and stays its own session's", async () => {
    const { terminals } = terminalsWith();
    const id = await terminals.create({ sessionId: "s1", command: "sh", args: ["-c", "echo mine; sleep 3600"] });
    await printedLines(terminals, id, 1);
    expect(() => terminals.output(id, "s2")).toThrow(`unknown terminal: "${id}"`);
    await expect(terminals.waitForExit(id, "s2")).rejects.toThrow(`unknown terminal: "${id}"`);
    await expect(terminals.stop(id, "s2")).rejects.toThrow(`unknown terminal: "${id}"`);
    await expect(terminals.close(id, "s2")).rejects.toThrow(`unknown terminal: "${id}"`);
    // Still running, still s1's.
    expect(terminals.output(id, "s1")).toEqual({ output: "mine\n", truncated: false, exitStatus: null });
    expect(await terminals.stop(id, "s1")).toEqual({ exitCode: null, signal: "SIGTERM" });
  });

  it("close stops the whole group and forgets the terminal", async () => {
    const { terminals, ledger } = terminalsWith();
    const id = await terminals.create({ sessionId: "s1", command: "sh", args: ["-c", script] });
    const grandchild = Number((await printedLines(terminals, id, 1))[0]);
    const members = runningMembers(ledger.list()[0]!.pgid, grandchild);

    await terminals.close(id);

    for (const { pid } of members) expect(processIsRunning(pid)).toBe(false);
    expect(ledger.list()).toEqual([]);
    expect(() => terminals.output(id)).toThrow(`unknown terminal: "${id}"`);
    await expect(terminals.waitForExit(id)).rejects.toThrow(`unknown terminal: "${id}"`);
    await expect(terminals.stop(id)).rejects.toThrow(`unknown terminal: "${id}"`);
    await expect(terminals.close(id)).rejects.toThrow(`unknown terminal: "${id}"`);
  });

  it("stop after the shell exited still ends the background job it left in the group", async () => {
    const { terminals, ledger } = terminalsWith();
    const args = ["-c", "sleep 3600 >/dev/null & echo $!"];
    const id = await terminals.create({ sessionId: "s1", command: "sh", args });
    const grandchild = Number((await printedLines(terminals, id, 1))[0]);
    started.push(startedProcess(grandchild));
    expect(await terminals.waitForExit(id)).toEqual({ exitCode: 0, signal: null });
    expect(processIsRunning(grandchild)).toBe(true);
    expect(ledger.list()).toHaveLength(1);

    await terminals.stop(id);

    expect(processIsRunning(grandchild)).toBe(false);
    expect(ledger.list()).toEqual([]);
    expect(terminals.output(id).exitStatus).toEqual({ exitCode: 0, signal: null });
  });

  it("closeForSession stops only that session's terminals; closeAll stops the rest and admits no more", async () => {
    const { terminals, ledger } = terminalsWith();
    const mine = await terminals.create({ sessionId: "mine", command: "sleep", args: ["3600"] });
    const alsoMine = await terminals.create({ sessionId: "mine", command: "sleep", args: ["3600"] });
    const theirs = await terminals.create({ sessionId: "theirs", command: "sleep", args: ["3600"] });
    const [minePid, alsoMinePid, theirsPid] = ledger.list().map((group) => group.pgid) as [number, number, number];

    await terminals.closeForSession("mine");

    expect(terminals.ids()).toEqual([theirs]);
    expect(processIsRunning(minePid) || processIsRunning(alsoMinePid)).toBe(false);
    expect(processIsRunning(theirsPid)).toBe(true);
    expect(() => terminals.output(mine)).toThrow(/unknown terminal/);
    expect(() => terminals.output(alsoMine)).toThrow(/unknown terminal/);

    await terminals.closeAll();

    expect(processIsRunning(theirsPid)).toBe(false);
    expect(terminals.ids()).toEqual([]);
    expect(ledger.list()).toEqual([]);
    await expect(terminals.create({ sessionId: "theirs", command: "true" })).rejects.toThrow(`terminals of ${directory} are closed`);
  });

  it("closeForSession also stops a command of that session that was still starting", async () => {
    const { terminals, ledger } = terminalsWith();
    const creating = terminals.create({ sessionId: "leaving", command: "sleep", args: ["3600"] });
    const other = terminals.create({ sessionId: "staying", command: "sleep", args: ["3600"] });

    await terminals.closeForSession("leaving");

    const id = await creating;
    expect(() => terminals.output(id)).toThrow(/unknown terminal/);
    const otherId = await other;
    expect(terminals.ids()).toEqual([otherId]);
    const leaving = ledger.everAdded.find((group) => !ledger.list().includes(group));
    expect(ledger.list()).toHaveLength(1);
    expect(processIsRunning(leaving!.pgid)).toBe(false);
  });

  it("closeAll stops a command that was still starting, and its creation fails", async () => {
    const { terminals, ledger } = terminalsWith();
    const creating = terminals.create({ sessionId: "s1", command: "sleep", args: ["3600"] });
    const closing = terminals.closeAll();

    await expect(creating).rejects.toThrow(`terminals of ${directory} are closed`);
    await closing;

    expect(ledger.everAdded).toHaveLength(1);
    expect(processIsRunning(ledger.everAdded[0]!.pgid)).toBe(false);
    expect(ledger.list()).toEqual([]);
  });
});

describe("Terminals: exit statuses", () => {
  it("reports a normal exit, a non-zero exit and a signal", async () => {
    const { terminals } = terminalsWith();
    const ok = await terminals.create({ sessionId: "s", command: "sh", args: ["-c", "exit 0"] });
    const failing = await terminals.create({ sessionId: "s", command: "sh", args: ["-c", "exit 7"] });
    const signalled = await terminals.create({ sessionId: "s", command: "sh", args: ["-c", "kill -USR1 $$"] });

    expect(await terminals.waitForExit(ok)).toEqual({ exitCode: 0, signal: null });
    expect(await terminals.waitForExit(failing)).toEqual({ exitCode: 7, signal: null });
    expect(await terminals.waitForExit(signalled)).toEqual({ exitCode: null, signal: "SIGUSR1" });
    expect(terminals.output(failing).exitStatus).toEqual({ exitCode: 7, signal: null });
  });

  it("has no exit status while running, and answers waitForExit again after the exit", async () => {
    const { terminals } = terminalsWith();
    const id = await terminals.create({ sessionId: "s", command: "sh", args: ["-c", "echo started; sleep 3600"] });
    await printedLines(terminals, id, 1);
    expect(terminals.output(id).exitStatus).toBeNull();
    await terminals.stop(id);

    const id2 = await terminals.create({ sessionId: "s", command: "echo", args: ["done"] });
    const first = await terminals.waitForExit(id2);
    expect(await terminals.waitForExit(id2)).toEqual(first);
    expect(terminals.output(id2)).toEqual({
      output: "done\n",
      truncated: false,
      exitStatus: { exitCode: 0, signal: null },
    });
  });
});

describe("Terminals: command, environment and working directory", () => {
  it("runs without a shell in the location directory, with the given env added to the host's", async () => {
    const { terminals } = terminalsWith();
    const pwd = await terminals.create({ sessionId: "s", command: "pwd" });
    const env = await terminals.create({
      sessionId: "s",
      command: "sh",
      args: ["-c", 'printf "%s|%s" "$BERTH_TERMINAL_TEST" "$PATH"'],
      env: [{ name: "BERTH_TERMINAL_TEST", value: "a value; $(not expanded)" }],
    });
    const literal = await terminals.create({ sessionId: "s", command: "echo", args: ["$HOME", "*"] });
    const elsewhere = await terminals.create({ sessionId: "s", command: "pwd", cwd: root });

    for (const id of [pwd, env, literal, elsewhere]) await terminals.waitForExit(id);
    expect(terminals.output(pwd).output).toBe(`${directory}\n`);
    expect(terminals.output(env).output).toBe(`a value; $(not expanded)|${process.env.PATH}`);
    expect(terminals.output(literal).output).toBe("$HOME *\n");
    expect(terminals.output(elsewhere).output).toBe(`${realpathSync(root)}\n`);
  });

  it("names what is wrong with a request", async () => {
    const { terminals } = terminalsWith();
    const missing = join(root, "no-such-dir");
    await expect(terminals.create({ sessionId: "s", command: "berth-missing-command" })).rejects.toThrow(
      'cannot start command "berth-missing-command": no such command',
    );
    await expect(terminals.create({ sessionId: "s", command: "true", cwd: missing })).rejects.toThrow(`working directory does not exist: ${missing}`);
    await expect(terminals.create({ sessionId: "s", command: "true", cwd: "relative/dir" })).rejects.toThrow(
      'terminal cwd must be an absolute path, got "relative/dir"',
    );
    await expect(terminals.create({ sessionId: "s", command: "" })).rejects.toThrow('terminal command must be a non-empty string, got ""');
    await expect(terminals.create({ sessionId: "s", command: "true", outputByteLimit: -5 })).rejects.toThrow(
      "outputByteLimit must be a non-negative integer, got -5",
    );
    await expect(terminals.create({ sessionId: "s", command: "true", env: [{ name: "A=B", value: "x" }] })).rejects.toThrow(
      'invalid environment variable name: "A=B"',
    );
    expect(() => terminals.output("nope")).toThrow('unknown terminal: "nope"');
    expect(() => new Terminals({ directory, outputDir, outputByteLimit: Number.NaN })).toThrow(
      "outputByteLimit must be a non-negative integer, got null",
    );
  });
});

describe("Terminals: bounded output spilled to a file", () => {
  it("truncates the retained output at a character boundary and keeps the full output in the file", async () => {
    const { terminals } = terminalsWith({ outputByteLimit: 1_000 });
    const id = await terminals.create({ sessionId: "s", command: "seq", args: ["1", "20000"] });
    const euro = await terminals.create({ sessionId: "s", command: "printf", args: ["ab€€€"], outputByteLimit: 8 });
    await terminals.waitForExit(id);
    await terminals.waitForExit(euro);

    const full = Array.from({ length: 20_000 }, (_, i) => `${i + 1}\n`).join("");
    const { output, truncated } = terminals.output(id);
    expect(truncated).toBe(true);
    expect(output).toBe(full.slice(-1_000));
    expect(terminals.output(euro)).toMatchObject({ output: "€€", truncated: true });

    await terminals.close(id);
    await terminals.close(euro);
    expect(readFileSync(outputFilePath(outputDir, id), "utf8")).toBe(full);
    expect(readFileSync(outputFilePath(outputDir, euro), "utf8")).toBe("ab€€€");
  });

  it("captures stderr with stdout", async () => {
    const { terminals } = terminalsWith();
    const id = await terminals.create({ sessionId: "s", command: "sh", args: ["-c", "echo out; echo err >&2"] });
    await terminals.waitForExit(id);
    expect(terminals.output(id).output.split("\n").sort()).toEqual(["", "err", "out"]);
  });

  it("names an output directory that cannot be created, and starts nothing", async () => {
    const notADirectory = join(root, "not-a-dir");
    writeFileSync(notADirectory, "");
    const { terminals, ledger } = terminalsWith({ outputDir: notADirectory });
    await expect(terminals.create({ sessionId: "s", command: "true" })).rejects.toThrow(`cannot create terminal output directory ${notADirectory}`);
    expect(ledger.everAdded).toEqual([]);
  });
});
