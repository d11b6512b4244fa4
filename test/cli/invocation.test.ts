import { describe, expect, it } from "vitest";
import { berthCommand, invocationOf, shellQuote } from "../../src/config/invocation.js";

describe("how Berth was started, for the commands it tells people to run", () => {
  const cases = [
    { where: "npx's cache", dir: "/home/me/.npm/_npx/0f3c/node_modules/berth-acp", command: "npx berth-acp" },
    { where: "a global install", dir: "/usr/local/lib/node_modules/berth-acp", command: "berth" },
    { where: "a global install under nvm", dir: "/home/me/.nvm/versions/node/v20.20.2/lib/node_modules/berth-acp", command: "berth" },
    { where: "a project's dependencies", dir: "/home/me/app/node_modules/berth-acp", command: "npx berth" },
    { where: "a checkout, run from its root", dir: "/home/me/src/berth", command: "node dist/cli/main.js" },
  ];
  for (const { where, dir, command } of cases) {
    it(`${where}: ${command}`, () => {
      const cwd = dir.includes("node_modules") ? "/home/me" : dir;
      expect(berthCommand(invocationOf(dir, "berth-acp", `${dir}/dist/cli/main.js`, cwd))).toBe(command);
    });
  }

  it("a checkout run from elsewhere is named by its absolute path, quoted for a shell", () => {
    const dir = "/home/me/my tools/berth";
    expect(berthCommand(invocationOf(dir, "berth-acp", `${dir}/dist/cli/main.js`, "/tmp"))).toBe("node '/home/me/my tools/berth/dist/cli/main.js'");
    expect(berthCommand(invocationOf(dir, "berth-acp", `${dir}/dist/cli/main.js`, "/home/me/my tools"))).toBe("node berth/dist/cli/main.js");
  });

  it("a scoped package is found one level deeper", () => {
    const global = invocationOf("/usr/lib/node_modules/@acme/berth", "@acme/berth", "/x/dist/cli/main.js", "/");
    expect(global).toEqual({ name: "global" });
  });

  it("a folder that merely shares the package's name outside node_modules is a checkout", () => {
    expect(invocationOf("/home/me/berth-acp", "berth-acp", "/home/me/berth-acp/dist/cli/main.js", "/home/me/berth-acp").name).toBe("checkout");
  });

  it("this test runs from the checkout: the default names its script from the working directory", () => {
    expect(berthCommand()).toBe("node dist/cli/main.js");
  });

  it("shell words are quoted only when they must be", () => {
    expect(shellQuote("/data/berth")).toBe("/data/berth");
    expect(shellQuote("it's here")).toBe(`'it'\\''s here'`);
  });
});
