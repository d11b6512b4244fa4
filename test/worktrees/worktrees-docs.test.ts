import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { BerthProcess, cliMain } from "../server/serve-process.js";

const doc = readFileSync(new URL("../../docs/worktrees.md", import.meta.url), "utf8");
/** The `sh` blocks of docs/worktrees.md are the examples meant to run as they are, in order. */
const examples = [...doc.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);

const dirs: string[] = [];
const hosts: BerthProcess[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) {
    host.signal("SIGTERM");
    await host.exited;
    host.killGroup();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("docs/worktrees.md", () => {
  it("its examples run against a live berth serve, with berth on the PATH, and every command succeeds", async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), "berth-wt-docs-")));
    dirs.push(home);
    const env = { HOME: home, XDG_DATA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
    const host = new BerthProcess(["serve", "--port", "0", "--data-dir", join(env.XDG_DATA_HOME, "berth")], env);
    hosts.push(host);
    const { url, token } = await host.startupLine();
    // `berth` as an installed package names it: this checkout's build.
    const bin = join(home, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "berth"), `#!/bin/sh\nexec "${process.execPath}" "${cliMain}" "$@"\n`);
    chmodSync(join(bin, "berth"), 0o755);
    writeFileSync(join(home, ".curlrc"), "fail-with-body\nshow-error\n");
    const work = join(home, "work");
    mkdirSync(work);

    const { stdout } = await promisify(execFile)("bash", ["-c", `set -euo pipefail\n${examples.join("\n")}`], {
      cwd: work,
      env: { ...env, PATH: `${bin}:${process.env.PATH}`, CURL_HOME: home, BERTH: url, TOKEN: token },
    });
    expect(stdout).toMatch(/^[0-9a-f-]{36}\nworktree \S+\/data\/berth\/worktrees\/demo-[0-9a-f]{8} \(branch berth\/add-a-greeting from main\)\n/);
    expect(stdout).toContain('{"branch":"try-another-way","base":"main","state":"active"}\n');
    expect(stdout).toContain('{"ahead":0,"behind":0,"uncommitted":0,"readyToReview":false}\n');
    expect(stdout).toMatch(/^landed berth\/add-a-greeting into main at [0-9a-f]{40} in \S+\/work\/demo$/m);
    expect(stdout).toContain("Merge branch 'berth/add-a-greeting'\nAdd a greeting\nfirst\n");
    expect(stdout).toMatch(/discarded\n0\n$/);
  });
});
