import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { dataDirOf } from "../../src/cli/data-dir.js";
import { UsageError } from "../../src/cli/exit-codes.js";
import { parseConfig } from "../../src/config/load-config.js";
import { cliMain } from "../server/serve-process.js";

const run = promisify(execFile);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function berth(args: string[], cwd = tmpdir()): Promise<{ stderr: string; code: number }> {
  const env = { ...process.env, XDG_CONFIG_HOME: join(tmpdir(), "berth-no-config") };
  try {
    const { stderr } = await run(process.execPath, [cliMain, ...args], { env, cwd, timeout: 30_000 });
    return { stderr, code: 0 };
  } catch (error) {
    const { stderr, code } = error as { stderr: string; code: number };
    return { stderr, code };
  }
}

describe("the data directory a command uses", () => {
  it("is --data-dir from the working directory, else the configuration's (absolute or under the home), else the default", () => {
    const env = { XDG_DATA_HOME: "/data" };
    expect(dataDirOf("d", "/configured", env, "/work")).toBe("/work/d");
    expect(dataDirOf(undefined, "/configured", env, "/work")).toBe("/configured");
    expect(dataDirOf(undefined, "~/berth-data", env, "/work")).toBe(join(homedir(), "berth-data"));
    expect(dataDirOf(undefined, "~", env, "/work")).toBe(homedir());
    expect(dataDirOf(undefined, undefined, env, "/work")).toBe("/data/berth");
  });

  it("refuses an empty --data-dir (an unset shell variable), which would be the working directory", () => {
    for (const empty of ["", "  "]) {
      expect(() => dataDirOf(empty, undefined, {}, "/work")).toThrow(
        new UsageError("--data-dir: expected a directory, got an empty path (an unset variable?)"),
      );
    }
  });

  it("refuses a configured dataDir that depends on where the command runs", () => {
    expect(() => parseConfig({ dataDir: "berth-data" })).toThrow(/dataDir.*expected an absolute path or one under the home/);
    expect(parseConfig({ dataDir: "~/berth-data" }).dataDir).toBe("~/berth-data");
  });

  it("says so in one line, with no stack, when a file is in the data directory's place or --data-dir is empty", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "berth-data-dir-")));
    dirs.push(dir);
    const file = join(dir, "a-file");
    writeFileSync(file, "not a directory");
    const notADirectory = `the data directory ${file} is not a directory (a file is in its place)`;
    expect(await berth(["token", "--data-dir", file])).toEqual({ code: 1, stderr: `berth token: ${notADirectory}\n` });
    expect(await berth(["token", "rotate", "--data-dir", file])).toEqual({ code: 1, stderr: `berth token rotate: ${notADirectory}\n` });
    const serve = await berth(["serve", "--port", "0", "--data-dir", file]);
    expect(serve).toMatchObject({ code: 1, stderr: expect.stringContaining(notADirectory) });
    expect(serve.stderr).not.toMatch(/\n\s+at /);
    const empty = await berth(["serve", "--port", "0", "--data-dir", ""], dir);
    expect(empty).toMatchObject({ code: 2, stderr: expect.stringContaining("--data-dir: expected a directory, got an empty path") });
    expect(await berth(["sessions", "--data-dir", ""], dir)).toMatchObject({ code: 2 });
    // Nothing was made in the working directory.
    expect(readdirSync(dir)).toEqual(["a-file"]);
  });
});

describe("the access token a client command uses", () => {
  it("refuses a --token with a line break or a space by name, without echoing it", async () => {
    for (const token of ["abc\ndef", "two words"]) {
      const refused = await berth(["sessions", "--url", "http://127.0.0.1:9", "--token", token]);
      expect(refused).toEqual({
        code: 2,
        stderr: "berth sessions: --token: expected an access token: printable characters, no spaces or line breaks\n",
      });
    }
  });

  it("refuses a token file that holds no token, naming the file", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "berth-token-file-")));
    dirs.push(dir);
    writeFileSync(join(dir, "token"), "first line\nsecond line\n");
    const refused = await berth(["sessions", "--url", "http://127.0.0.1:9", "--data-dir", dir]);
    expect(refused).toEqual({
      code: 1,
      stderr: `berth sessions: the token file ${join(dir, "token")}: expected an access token: printable characters, no spaces or line breaks\n`,
    });
  });
});
