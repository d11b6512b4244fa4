import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findExecutable } from "../../src/processes/find-executable.js";
import { removeTempDirs, tempDir } from "../git/git-repository.js";

const root = tempDir("berth-find-executable-");
afterAll(removeTempDirs);

/** A directory of its own under the test's, with `files` in it (name → mode; a mode of "dir" makes a directory). */
function directory(name: string, files: Record<string, number | "dir">): string {
  const dir = join(root, name);
  mkdirSync(dir);
  for (const [file, mode] of Object.entries(files)) {
    if (mode === "dir") mkdirSync(join(dir, file));
    else {
      writeFileSync(join(dir, file), "#!/bin/sh\n");
      chmodSync(join(dir, file), mode);
    }
  }
  return dir;
}

describe("findExecutable, as execvp would", () => {
  const executable = directory("executable", { tool: 0o755 });
  const alsoExecutable = directory("also-executable", { tool: 0o755 });
  const readable = directory("readable", { tool: 0o644 });
  const withDirectory = directory("with-directory", { tool: "dir" });

  it("refuses an empty command as missing", () => {
    expect(findExecutable("", executable, `${executable}`)).toEqual({ code: "ENOENT" });
  });

  it("searches PATH in order, past a file it may not run, and tells which it found", () => {
    expect(findExecutable("tool", "/", `${readable}:${executable}`)).toEqual({ path: join(executable, "tool") });
    expect(findExecutable("tool", "/", `${alsoExecutable}:${executable}`)).toEqual({ path: join(alsoExecutable, "tool") });
    expect(findExecutable("tool", "/", `${executable}:${alsoExecutable}`)).toEqual({ path: join(executable, "tool") });
    expect(findExecutable("tool", "/", `${join(root, "none")}:${executable}`)).toEqual({ path: join(executable, "tool") });
  });

  it("says EACCES when only a file it may not run, or a directory, has the name; ENOENT when nothing has it", () => {
    expect(findExecutable("tool", "/", readable)).toEqual({ code: "EACCES" });
    expect(findExecutable("tool", "/", withDirectory)).toEqual({ code: "EACCES" });
    expect(findExecutable("tool", "/", join(root, "none"))).toEqual({ code: "ENOENT" });
  });

  it("takes an empty PATH entry as the working directory, and a name with a slash as a path from it", () => {
    expect(findExecutable("tool", executable, `${join(root, "none")}:`)).toEqual({ path: join(executable, "tool") });
    expect(findExecutable("./tool", executable, "")).toEqual({ path: join(executable, "tool") });
    expect(findExecutable("executable/tool", root, undefined)).toEqual({ path: join(executable, "tool") });
  });

  it("searches /usr/bin and /bin when the environment has no PATH", () => {
    expect(findExecutable("sh", root, undefined)).toMatchObject({ path: expect.stringMatching(/^\/(usr\/)?bin\/sh$/) });
  });
});
