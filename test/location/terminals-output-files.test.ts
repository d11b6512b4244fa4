import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deleteExpiredOutput, DEFAULT_OUTPUT_RETENTION_MS, OutputFile, outputFilePath } from "../../src/location/terminal-output-files.js";

const DAY = 24 * 60 * 60 * 1000;
const now = Date.UTC(2026, 5, 15, 12);
let dir: string;

/** Writes a file and dates its last modification `ageMs` before `now`. */
function fileAged(name: string, ageMs: number): string {
  const path = join(dir, name);
  writeFileSync(path, name);
  const modified = (now - ageMs) / 1000;
  utimesSync(path, modified, modified);
  return path;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "berth-output-"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("deleteExpiredOutput", () => {
  it("removes terminal output older than the retention period and reports each removal", async () => {
    const old = fileAged("terminal-old.log", 8 * DAY);
    const ancient = fileAged("terminal-ancient.log", 400 * DAY);
    fileAged("terminal-fresh.log", 6 * DAY);
    fileAged("terminal-edge.log", 7 * DAY);
    fileAged("notes.txt", 30 * DAY);
    fileAged("terminal-old.txt", 30 * DAY);
    mkdirSync(join(dir, "terminal-dir.log"));

    const removed = await deleteExpiredOutput(dir, DEFAULT_OUTPUT_RETENTION_MS, now);

    expect(removed.map((file) => file.path).sort()).toEqual([ancient, old].sort());
    expect(removed.find((file) => file.path === old)?.modifiedAt).toBe(now - 8 * DAY);
    expect(readdirSync(dir).sort()).toEqual(["notes.txt", "terminal-dir.log", "terminal-edge.log", "terminal-fresh.log", "terminal-old.txt"].sort());
  });

  it("measures age against the given time and retention", async () => {
    const path = fileAged("terminal-a.log", 2 * DAY);
    expect(await deleteExpiredOutput(dir, 3 * DAY, now)).toEqual([]);
    expect(await deleteExpiredOutput(dir, 3 * DAY, now + 2 * DAY)).toEqual([{ path, modifiedAt: now - 2 * DAY }]);
  });

  it("has nothing to remove in a directory that does not exist", async () => {
    expect(await deleteExpiredOutput(join(dir, "missing"), DAY, now)).toEqual([]);
  });

  it("rejects a retention that is not a non-negative duration, naming it", async () => {
    await expect(deleteExpiredOutput(dir, -1, now)).rejects.toThrow("output retention must be a non-negative number of milliseconds, got -1");
  });
});

describe("OutputFile", () => {
  it("appends every chunk and closes once", async () => {
    const file = new OutputFile(outputFilePath(dir, "t1"));
    file.write(Buffer.from("one "));
    file.write(Buffer.from("two"));
    await file.close();
    await file.close();
    expect(readFileSync(join(dir, "terminal-t1.log"), "utf8")).toBe("one two");
    expect(file.error).toBeUndefined();
  });

  it("keeps the first write error instead of throwing", async () => {
    const file = new OutputFile(join(dir, "missing", "terminal-t2.log"));
    file.write(Buffer.from("lost"));
    await file.close();
    expect(file.error?.message).toMatch(/ENOENT/);
  });
});
