import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { cliMain } from "../server/serve-process.js";
import { cleanUp, startFixture } from "../server/server-harness.js";

/**
 * No container engine runs where the tests run, so the container recipe is checked the way a linter would, and the
 * parts of it that Berth itself runs (the command line, the health check) are run against a real Berth.
 */
const repoDir = fileURLToPath(new URL("../..", import.meta.url));
const packageJson = JSON.parse(readFileSync(join(repoDir, "package.json"), "utf8")) as {
  bin: Record<string, string>;
  dependencies: Record<string, string>;
};
const run = promisify(execFile);

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments left out. */
function instructions(text: string): Instruction[] {
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword!.toUpperCase(), args: rest.join(" ") };
    });
}

const all = instructions(readFileSync(join(repoDir, "Dockerfile"), "utf8"));
const lastFrom = all.map((i) => i.keyword).lastIndexOf("FROM");
const final = all.slice(lastFrom);
const one = (keyword: string) => {
  const found = final.filter((i) => i.keyword === keyword);
  expect(found, `one ${keyword} in the final stage`).toHaveLength(1);
  return found[0]!.args;
};
const execForm = (args: string) => JSON.parse(args) as string[];

afterEach(cleanUp);

describe("the container recipe", () => {
  it("builds on Node 20, the version Berth supports, in every stage", () => {
    const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(readFileSync(join(repoDir, "Dockerfile"), "utf8"))?.[1];
    expect(image).toMatch(/^node:20-/);
    for (const from of all.filter((i) => i.keyword === "FROM")) expect(from.args).toMatch(/^\$\{NODE_IMAGE\}( AS \w+)?$/);
  });

  it("copies only files the checkout has, and keeps local installs and builds out of the context", () => {
    const copied = all.filter((i) => i.keyword === "COPY" && !i.args.startsWith("--from")).flatMap((i) => i.args.split(" ").slice(0, -1));
    for (const source of copied) expect(existsSync(join(repoDir, source)), source).toBe(true);
    const ignored = readFileSync(join(repoDir, ".dockerignore"), "utf8").split("\n");
    expect(ignored).toEqual(expect.arrayContaining(["node_modules", "dist", ".git"]));
  });

  it("installs the packed package with the install scripts its runtime dependencies need allowed by name", () => {
    const install = all.find((i) => i.keyword === "RUN" && i.args.includes("npm install --global"));
    expect(install?.args).toContain("--allow-scripts=better-sqlite3");
    expect(Object.keys(packageJson.dependencies)).toContain("better-sqlite3");
  });

  it("runs as a user who is not root, with tini as PID 1, the data on a volume and a health check", () => {
    expect(one("USER")).not.toMatch(/^(root|0)(:|$)/);
    const entrypoint = execForm(one("ENTRYPOINT"));
    expect(entrypoint.slice(0, 2)).toEqual(["/usr/bin/tini", "--"]);
    expect(Object.keys(packageJson.bin)).toContain(entrypoint[2]);
    const command = execForm(one("CMD"));
    expect(execForm(one("VOLUME"))).toEqual([command[command.indexOf("--data-dir") + 1]]);
    expect(one("EXPOSE")).toBe(command[command.indexOf("--port") + 1]);
    expect(one("HEALTHCHECK")).toContain(`http://127.0.0.1:${one("EXPOSE")}/healthz`);
  });

  it("its command line is one `berth serve` takes", async () => {
    const command = execForm(one("CMD"));
    const { stdout: help } = await run(process.execPath, [cliMain, command[0]!, "--help"]);
    for (const flag of command.filter((word) => word.startsWith("--"))) expect(help).toContain(`${flag} <`);
  });

  it("its health check passes against a running Berth and fails when none answers", async () => {
    const fixture = await startFixture();
    const check = (port: string) => {
      const args = execForm(one("HEALTHCHECK").replace(/^.*?CMD\s+/, "")).map((word) => word.replace(":7420/", `:${port}/`));
      return run(args[0] === "node" ? process.execPath : args[0]!, args.slice(1)).then(
        () => 0,
        (error: { code: number }) => error.code,
      );
    };
    expect(await check(new URL(fixture.url).port)).toBe(0);
    await fixture.stop();
    expect(await check(new URL(fixture.url).port)).toBe(1);
  });
});
