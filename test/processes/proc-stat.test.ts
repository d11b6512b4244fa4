import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseProcStat, readBootId, readProcStat } from "../../src/processes/proc-stat.js";

describe("/proc/<pid>/stat", () => {
  it("parses a command name holding spaces and parentheses", () => {
    const afterName = "S 1 77 78 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10";
    expect(parseProcStat(`4242 (we (ird) name)) ${afterName}`)).toEqual({
      pid: 4242,
      state: "S",
      pgid: 77,
      startTicks: 987654,
    });
  });

  it("rejects a line that is not a stat line", () => {
    expect(() => parseProcStat("not a stat line")).toThrow(/malformed \/proc stat line/);
    expect(() => parseProcStat("1 (short) S 0")).toThrow(/has no field 5/);
    // A closing parenthesis before the opening one is no command name.
    expect(() => parseProcStat("12 )x( S 1 2 3")).toThrow(/malformed \/proc stat line/);
  });

  it("quotes at most the first 80 characters of a bad line", () => {
    const tail = "x".repeat(200);
    for (const line of [`no parentheses ${tail}`, `1 (short) S 0 ${tail}`]) {
      let message = "";
      try {
        parseProcStat(line);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain(JSON.stringify(line.slice(0, 80)));
      expect(message).not.toContain(line.slice(0, 81));
    }
  });

  it("reads a live process and nothing for a pid that does not exist", () => {
    const own = readProcStat(process.pid);
    expect(own?.pid).toBe(process.pid);
    expect(own?.startTicks).toBeGreaterThan(0);
    const neverAllocated = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8")) + 1;
    expect(readProcStat(neverAllocated)).toBeUndefined();
  });

  it("reads the boot id", () => {
    expect(readBootId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
