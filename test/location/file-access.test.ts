import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileAccess, FileAccessError, type FileAccessErrorCode } from "../../src/location/file-access.js";

let base: string;
/** The session's location directory. */
let app: string;
/** An additional directory of the session. */
let lib: string;
/** A directory outside the session, with a secret in it. */
let outside: string;
let files: FileAccess;

const TEXT = "one\ntwo\nthree\nfour\n";

const read = (path: string): Promise<unknown> => files.readTextFile({ path });
const write = (path: string, content = "x"): Promise<unknown> => files.writeTextFile({ path, content });

async function refusal(attempt: Promise<unknown>): Promise<FileAccessError> {
  const error = await attempt.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(FileAccessError);
  return error as FileAccessError;
}

async function expectRefused(attempt: Promise<unknown>, code: FileAccessErrorCode, message: string | RegExp): Promise<void> {
  const error = await refusal(attempt);
  expect(error.code).toBe(code);
  if (typeof message === "string") expect(error.message).toBe(message);
  else expect(error.message).toMatch(message);
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "berth-files-")));
  app = join(base, "app");
  lib = join(base, "lib");
  outside = join(base, "outside");
  for (const directory of [app, join(app, "src"), lib, outside]) mkdirSync(directory);
  writeFileSync(join(app, "notes.txt"), TEXT);
  writeFileSync(join(lib, "shared.txt"), "shared\n");
  writeFileSync(join(outside, "secret.txt"), "secret\n");
  files = new FileAccess({ roots: [app, lib] });
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

describe("FileAccess: reading", () => {
  it("reads a whole file, in the location and in an additional directory", async () => {
    expect(await read(join(app, "notes.txt"))).toEqual({ content: TEXT });
    expect(await read(join(lib, "shared.txt"))).toEqual({ content: "shared\n" });
  });

  it.each([
    [{ line: 2 }, "two\nthree\nfour\n"],
    [{ line: 2, limit: 2 }, "two\nthree\n"],
    [{ limit: 1 }, "one\n"],
    [{ line: 4, limit: 10 }, "four\n"],
    [{ line: 9 }, ""],
    [{ line: 1, limit: 0 }, ""],
    [{ line: null, limit: null }, TEXT],
  ])("reads lines %j", async (range, content) => {
    expect(await files.readTextFile({ path: join(app, "notes.txt"), ...range })).toEqual({ content });
  });

  it("reads the last line of a file without a final newline", async () => {
    writeFileSync(join(app, "short.txt"), "a\nb");
    expect(await files.readTextFile({ path: join(app, "short.txt"), line: 2, limit: 5 })).toEqual({ content: "b" });
  });

  it.each([
    [{ line: 0 }, "line must be a whole number of at least 1, got 0"],
    [{ line: 1.5 }, "line must be a whole number of at least 1, got 1.5"],
    [{ limit: -1 }, "limit must be a whole number of at least 0, got -1"],
  ])("refuses the range %j", async (range, message) => {
    await expectRefused(files.readTextFile({ path: join(app, "notes.txt"), ...range }), "invalid_request", message);
  });

  it("follows a symlink that stays inside", async () => {
    symlinkSync(join(lib, "shared.txt"), join(app, "shared-link.txt"));
    expect(await read(join(app, "shared-link.txt"))).toEqual({ content: "shared\n" });
  });

  it("refuses a missing file, a directory, and a FIFO", async () => {
    const [missing, directory, fifo] = [join(app, "missing.txt"), join(app, "src"), join(app, "pipe")];
    await expectRefused(read(missing), "not_found", `file "${missing}" does not exist`);
    await expectRefused(read(directory), "is_directory", `path "${directory}" is a directory, not a file`);
    execFileSync("mkfifo", [fifo]);
    await expectRefused(read(fifo), "not_a_file", `path "${fifo}" is not a regular file`);
  });

  it("refuses a file larger than the limit", async () => {
    const small = new FileAccess({ roots: [app], maxFileBytes: 10 });
    await expectRefused(
      small.readTextFile({ path: join(app, "notes.txt") }),
      "too_large",
      `file "${join(app, "notes.txt")}" is too large: ${TEXT.length} bytes, the limit is 10`,
    );
  });
});

describe("FileAccess: writing", () => {
  it("creates a file and overwrites it", async () => {
    const path = join(app, "src", "new.ts");
    await files.writeTextFile({ path, content: "export const a = 1;\n" });
    expect(readFileSync(path, "utf8")).toBe("export const a = 1;\n");
    await files.writeTextFile({ path, content: "b" });
    expect(readFileSync(path, "utf8")).toBe("b");
  });

  it("writes through a symlink inside to its target inside", async () => {
    symlinkSync(join(lib, "shared.txt"), join(app, "shared-link.txt"));
    await write(join(app, "shared-link.txt"), "changed\n");
    expect(readFileSync(join(lib, "shared.txt"), "utf8")).toBe("changed\n");
  });

  it("refuses a file in a directory that does not exist, and creates nothing", async () => {
    const path = join(app, "no-dir", "file.txt");
    await expectRefused(write(path), "not_found", `the directory of "${path}" does not exist`);
    expect(existsSync(join(app, "no-dir"))).toBe(false);
  });

  it("refuses a directory and content larger than the limit, leaving the file as it was", async () => {
    await expectRefused(write(join(app, "src")), "is_directory", /is a directory/);
    const small = new FileAccess({ roots: [app], maxFileBytes: 4 });
    const tooMuch = small.writeTextFile({ path: join(app, "notes.txt"), content: "12345" });
    await expectRefused(tooMuch, "too_large", /is too large: 5 bytes, the limit is 4/);
    expect(readFileSync(join(app, "notes.txt"), "utf8")).toBe(TEXT);
  });
});

describe("FileAccess: confinement", () => {
  const outsideMessage = (path: string, leadsTo?: string): string =>
    `path "${path}" is outside the session's directories (${app}, ${lib})${leadsTo ? ` (it leads to ${leadsTo})` : ""}`;

  it("refuses an absolute path outside, for reading and writing, and writes nothing", async () => {
    const secret = join(outside, "secret.txt");
    await expectRefused(read("/etc/passwd"), "outside_roots", outsideMessage("/etc/passwd"));
    await expectRefused(write(secret, "pwned"), "outside_roots", outsideMessage(secret));
    expect(readFileSync(secret, "utf8")).toBe("secret\n");
  });

  it("refuses a .. escape, and allows .. that stays inside", async () => {
    const dotDot = `${app}/../outside/secret.txt`;
    await expectRefused(read(dotDot), "outside_roots", outsideMessage(dotDot, join(outside, "secret.txt")));
    await expectRefused(write(`${app}/src/../../outside/new.txt`), "outside_roots", /is outside/);
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
    expect(await files.readTextFile({ path: `${app}/src/../notes.txt`, limit: 1 })).toEqual({ content: "one\n" });
  });

  it("refuses a directory whose name only starts like a root's", async () => {
    mkdirSync(`${app}-evil`);
    writeFileSync(`${app}-evil/x.txt`, "x");
    await expectRefused(files.readTextFile({ path: `${app}-evil/x.txt` }), "outside_roots", /is outside/);
  });

  it("refuses a symlink inside that points outside, for reading and writing", async () => {
    const link = join(app, "innocent.txt");
    symlinkSync(join(outside, "secret.txt"), link);
    await expectRefused(read(link), "outside_roots", outsideMessage(link, join(outside, "secret.txt")));
    await expectRefused(write(link, "pwned"), "outside_roots", /is outside/);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it("refuses a new file under a symlinked directory that points outside, and creates nothing", async () => {
    symlinkSync(outside, join(app, "vendor"));
    const path = join(app, "vendor", "new.txt");
    await expectRefused(write(path), "outside_roots", outsideMessage(path, join(outside, "new.txt")));
    const deeper = join(app, "vendor", "a", "b.txt");
    await expectRefused(write(deeper), "outside_roots", /is outside/);
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
  });

  it("refuses a dangling symlink inside that points outside, and creates nothing where it points", async () => {
    const link = join(app, "dangling.txt");
    symlinkSync(join(outside, "planted.txt"), link);
    await expectRefused(write(link), "outside_roots", outsideMessage(link, join(outside, "planted.txt")));
    expect(existsSync(join(outside, "planted.txt"))).toBe(false);
  });

  it("refuses a relative path, naming it", async () => {
    await expectRefused(read("notes.txt"), "not_absolute", 'path "notes.txt" is not absolute; file requests need an absolute path');
    await expectRefused(write("../outside/x.txt"), "not_absolute", /"\.\.\/outside\/x\.txt" is not absolute/);
  });

  it("refuses a path with a NUL byte and an empty path", async () => {
    await expectRefused(read(`${app}/notes.txt\0.png`), "invalid_request", /contains a NUL byte/);
    await expectRefused(read(""), "invalid_request", 'path must be a non-empty string, got ""');
  });
});

describe("FileAccess: roots", () => {
  it("resolves a symlinked root once, so paths through either spelling are inside", async () => {
    const alias = join(base, "app-alias");
    symlinkSync(app, alias);
    const viaAlias = new FileAccess({ roots: [alias] });
    expect(await viaAlias.readTextFile({ path: join(alias, "notes.txt"), limit: 1 })).toEqual({ content: "one\n" });
    expect(await viaAlias.readTextFile({ path: join(app, "notes.txt"), limit: 1 })).toEqual({ content: "one\n" });
  });

  it("refuses a root moved away and replaced by another directory, for reading and writing, naming it", async () => {
    renameSync(app, join(base, "app-moved"));
    mkdirSync(app);
    writeFileSync(join(app, "notes.txt"), "planted\n");
    const replaced = new RegExp(`the session's directory ${app} is no longer the directory it was when the session started`);
    await expectRefused(read(join(app, "notes.txt")), "root_replaced", replaced);
    await expectRefused(write(join(app, "new.txt")), "root_replaced", replaced);
    expect(existsSync(join(app, "new.txt"))).toBe(false);
    // The other root is untouched.
    expect(await read(join(lib, "shared.txt"))).toEqual({ content: "shared\n" });
  });

  it("refuses roots that are relative, missing or not directories, and no roots at all", () => {
    expect(() => new FileAccess({ roots: ["app"] })).toThrow('root directory must be an absolute path, got "app"');
    const missing = join(base, "nope");
    expect(() => new FileAccess({ roots: [missing] })).toThrow(`root directory does not exist: ${missing}`);
    expect(() => new FileAccess({ roots: [join(app, "notes.txt")] })).toThrow("root directory is not a directory");
    expect(() => new FileAccess({ roots: [] })).toThrow("file access needs at least one root directory");
  });
});
