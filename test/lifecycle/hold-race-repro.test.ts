import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const script = new URL("../../dist/examples/hold-race-repro.js", import.meta.url).pathname;

describe("hold-race reproduction script", () => {
  it("runs against the compiled kernel and observes exactly one release", async () => {
    expect(existsSync(script), "run `npm run build` first").toBe(true);
    const { stdout } = await promisify(execFile)(process.execPath, [script]);
    expect(stdout).toContain("surface-1 released while acquiring: holders=0, release clock armed=false");
    expect(stdout).toContain("acquisition succeeded: state=live, holders=0, release clock armed=true");
    expect(stdout.trim().split("\n").at(-1)).toBe("observed releases: 1");
  });
});
