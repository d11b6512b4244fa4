import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { berthCommand, berthWords, invocationOf, shellQuote, tokenLinkCommand } from "../../src/config/invocation.js";
import { cliMain } from "../server/serve-process.js";

const run = promisify(execFile);

describe("how Berth was started, for the commands it tells people to run", () => {
  const cases = [
    { where: "npx's cache", dir: "/home/me/.npm/_npx/0f3c/node_modules/berth-acp", command: "npx berth-acp" },
    {
      where: "pnpm dlx's cache",
      dir: "/home/me/.cache/pnpm/dlx/abc/node_modules/.pnpm/berth-acp@0.1.0/node_modules/berth-acp",
      command: "npx berth-acp",
    },
    { where: "a global install", dir: "/usr/local/lib/node_modules/berth-acp", command: "berth" },
    { where: "a global install under nvm", dir: "/home/me/.nvm/versions/node/v20.20.2/lib/node_modules/berth-acp", command: "berth" },
    { where: "a project's dependencies", dir: "/home/me/app/node_modules/berth-acp", command: "npx berth-acp" },
    {
      where: "pnpm's global folder",
      dir: "/home/me/.local/share/pnpm/global/5/.pnpm/berth-acp@0.1.0/node_modules/berth-acp",
      command: "npx berth-acp",
    },
    { where: "a project in a folder named lib", dir: "/repo/packages/lib/node_modules/berth-acp", command: "npx berth-acp" },
    { where: "a checkout, run from its root", dir: "/home/me/src/berth", command: "node dist/cli/main.js" },
  ];
  /** The `berth` commands npm linked for the global installs above: a folder merely named lib has none. */
  const linked = new Set(["/usr/local/bin/berth", "/home/me/.nvm/versions/node/v20.20.2/bin/berth", "/usr/bin/berth"]);
  const exists = (path: string) => linked.has(path);
  for (const { where, dir, command } of cases) {
    it(`${where}: ${command}`, () => {
      const cwd = dir.includes("node_modules") ? "/home/me" : dir;
      expect(berthCommand(invocationOf(dir, "berth-acp", `${dir}/dist/cli/main.js`, cwd, exists))).toBe(command);
    });
  }

  it("a checkout run from elsewhere is named by its absolute path, quoted for a shell", () => {
    const dir = "/home/me/my tools/berth";
    expect(berthCommand(invocationOf(dir, "berth-acp", `${dir}/dist/cli/main.js`, "/tmp"))).toBe("node '/home/me/my tools/berth/dist/cli/main.js'");
    expect(berthCommand(invocationOf(dir, "berth-acp", `${dir}/dist/cli/main.js`, "/home/me/my tools"))).toBe("node berth/dist/cli/main.js");
  });

  it("a program's command (an editor's terminal login) is words, naming a clone's script by its whole path", () => {
    const dir = "/home/me/my tools/berth";
    expect(berthWords(invocationOf(dir, "berth-acp", `${dir}/dist/cli/main.js`, dir), "program")).toEqual(["node", `${dir}/dist/cli/main.js`]);
    expect(berthWords(invocationOf("/usr/lib/node_modules/berth-acp", "berth-acp", "/x", "/", exists), "program")).toEqual(["berth"]);
    expect(berthWords(invocationOf("/home/me/app/node_modules/berth-acp", "berth-acp", "/x", "/"), "program")).toEqual(["npx", "berth-acp"]);
  });

  it("a scoped package is found one level deeper", () => {
    const global = invocationOf("/usr/lib/node_modules/@acme/berth", "@acme/berth", "/x/dist/cli/main.js", "/", exists);
    expect(global).toEqual({ name: "global" });
  });

  it("a folder that merely shares the package's name outside node_modules is a checkout", () => {
    expect(invocationOf("/home/me/berth-acp", "berth-acp", "/home/me/berth-acp/dist/cli/main.js", "/home/me/berth-acp").name).toBe("checkout");
  });

  it("this test runs from the checkout: the default names its script from the working directory", () => {
    expect(berthCommand()).toBe("node dist/cli/main.js");
  });

  it("a page anyone may load names no path of this machine: the clone's script from its root, a data directory by a placeholder", () => {
    expect(berthCommand(invocationOf("/home/me/src/berth", "berth-acp", "/home/me/src/berth/dist/cli/main.js", "/"), "page")).toBe(
      "node dist/cli/main.js",
    );
    expect(tokenLinkCommand("/home/me/secret-project/data", "page")).toBe("node dist/cli/main.js token --link --data-dir <its data directory>");
    expect(tokenLinkCommand("/home/me/secret-project/data")).toBe("node dist/cli/main.js token --link --data-dir /home/me/secret-project/data");
  });

  it("a word that names no command is an unknown command, not an argument of the default serve", async () => {
    const failed = await run(process.execPath, [cliMain, "statsu"]).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command 'statsu'") });
  });

  it("shell words are quoted only when they must be", () => {
    expect(shellQuote("/data/berth")).toBe("/data/berth");
    expect(shellQuote("it's here")).toBe(`'it'\\''s here'`);
  });
});
