import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileAccess, FileAccessError } from "../../src/location/file-access.js";
import { waitUntil } from "../support/process-table.js";

/**
 * Issue 9 item 5: `fs/*` checked the path, then opened it; a directory inside the location
 * swapped for a symlink to outside between the two let reads return, and writes create, the
 * outside file. Here a child process swaps `sub` between a real directory and a symlink to
 * outside as fast as it can (`renameat2` exchange is not in Node, so it alternates renames),
 * while thousands of reads and writes go through `sub/`. Not one may reach outside.
 */

const ATTEMPTS = 3_000;
const CONCURRENCY = 8;

let swapper: ChildProcess | undefined;
const temps: string[] = [];

afterEach(async () => {
  if (swapper?.pid !== undefined && swapper.exitCode === null) {
    const exited = new Promise((resolve) => swapper!.once("exit", resolve));
    swapper.kill("SIGKILL");
    await exited;
  }
  swapper = undefined;
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fixture() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "berth-race-")));
  temps.push(base);
  const location = join(base, "location");
  const outside = join(base, "outside");
  mkdirSync(join(location, "real"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(location, "real", "file.txt"), "inside");
  writeFileSync(join(outside, "file.txt"), "OUTSIDE");
  symlinkSync(outside, join(location, "link"));
  return { location, outside, files: new FileAccess({ roots: [location] }) };
}

/** Swaps `<location>/sub` between the directory `real` and the symlink `link`, until killed. */
function startSwapping(location: string): Promise<void> {
  return startSwapper(
    `
    for (;;) { move(dir, sub); move(sub, dir); move(link, sub); move(sub, link); }
  `,
    [join(location, "real"), join(location, "link"), join(location, "sub")],
  );
}

/**
 * Swaps the location directory itself for a symlink to outside and back, until killed: the
 * directory is moved aside (`sub` is its stash), the symlink takes its name, then the reverse.
 */
function startSwappingRoot(location: string, link: string, stash: string): Promise<void> {
  return startSwapper(
    `
    for (;;) { move(sub, dir); move(link, sub); move(sub, link); move(dir, sub); }
  `,
    [stash, link, location],
  );
}

/** Runs `loop` in a child process with `dir`, `link`, `sub` from `paths` and `move` (a rename that may fail). */
async function startSwapper(loop: string, paths: readonly string[]): Promise<void> {
  const script = `
    const { renameSync } = require("node:fs");
    const [dir, link, sub] = process.argv.slice(1);
    const move = (from, to) => { try { renameSync(from, to); } catch {} };
    process.stdout.write("swapping\\n");
    ${loop}
  `;
  swapper = spawn(process.execPath, ["-e", script, ...paths], { stdio: ["ignore", "pipe", "inherit"] });
  let said = "";
  swapper.stdout!.on("data", (chunk: Buffer) => (said += chunk.toString()));
  await waitUntil(() => said.includes("swapping"), "the swapper runs");
}

interface Tally {
  inside: number;
  escapes: number;
  refused: Record<string, number>;
  elapsedMs: number;
}

async function hammer(attempt: (i: number) => Promise<"inside" | "escape">): Promise<Tally> {
  const tally: Tally = { inside: 0, escapes: 0, refused: {}, elapsedMs: 0 };
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < ATTEMPTS) {
      const i = next++;
      try {
        tally[(await attempt(i)) === "inside" ? "inside" : "escapes"]++;
      } catch (error) {
        if (!(error instanceof FileAccessError)) throw error;
        tally.refused[error.code] = (tally.refused[error.code] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  tally.elapsedMs = Math.round(performance.now() - started);
  return tally;
}

describe("fs/* while the location directory itself is swapped for a symlink to outside", () => {
  it(`reads: ${ATTEMPTS} attempts, zero return the outside file`, async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "berth-race-root-")));
    temps.push(base);
    const location = join(base, "location");
    const outside = join(base, "outside");
    mkdirSync(location);
    mkdirSync(outside);
    writeFileSync(join(location, "file.txt"), "inside");
    writeFileSync(join(outside, "file.txt"), "OUTSIDE");
    symlinkSync(outside, join(base, "link"));
    const files = new FileAccess({ roots: [location] });
    await startSwappingRoot(location, join(base, "link"), join(base, "location-aside"));
    const tally = await hammer(async () => {
      const { content } = await files.readTextFile({ path: join(location, "file.txt") });
      if (content === "inside") return "inside";
      if (content === "OUTSIDE") return "escape";
      throw new Error(`unexpected content ${JSON.stringify(content)}`);
    });
    console.log(`file race, root swapped, reads: ${JSON.stringify(tally)}`);
    expect(tally.escapes).toBe(0);
    // The race really ran: some reads met the directory, some the symlink or the gap.
    expect(tally.inside).toBeGreaterThan(0);
    expect(ATTEMPTS - tally.inside).toBeGreaterThan(0);
  });
});

describe("fs/* while a directory inside is swapped for a symlink to outside", () => {
  it(`reads: ${ATTEMPTS} attempts, zero return the outside file`, async () => {
    const { location, files } = fixture();
    await startSwapping(location);
    const tally = await hammer(async () => {
      const { content } = await files.readTextFile({ path: join(location, "sub", "file.txt") });
      if (content === "inside") return "inside";
      if (content === "OUTSIDE") return "escape";
      throw new Error(`unexpected content ${JSON.stringify(content)}`);
    });
    console.log(`file race, reads: ${JSON.stringify(tally)}`);
    expect(tally.escapes).toBe(0);
    // The race really ran: some reads met the directory, some met the symlink or the gap.
    expect(tally.inside).toBeGreaterThan(0);
    expect(ATTEMPTS - tally.inside).toBeGreaterThan(0);
  });

  it(`writes: ${ATTEMPTS} attempts, zero create or change a file outside`, async () => {
    const { location, outside, files } = fixture();
    await startSwapping(location);
    let escapes = 0;
    const tally = await hammer(async (i) => {
      const name = `w${i}.txt`;
      await files.writeTextFile({ path: join(location, "sub", name), content: "written" });
      // Written somewhere: where? Only this attempt writes this name.
      if (existsSync(join(outside, name))) {
        escapes++;
        return "escape";
      }
      return "inside";
    });
    console.log(`file race, writes: ${JSON.stringify(tally)}`);
    expect(escapes).toBe(0);
    expect(tally.escapes).toBe(0);
    expect(readFileSync(join(outside, "file.txt"), "utf8")).toBe("OUTSIDE");
    expect(tally.inside).toBeGreaterThan(0);
    expect(ATTEMPTS - tally.inside).toBeGreaterThan(0);
  });
});
