import { execFile } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { serveOnTempDir } from "../server/serve-process.js";

const walkthrough = fileURLToPath(new URL("../../dist/examples/walkthrough.js", import.meta.url));
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-walkthrough-work-")));
let serve: Awaited<ReturnType<typeof serveOnTempDir>> | undefined;

afterAll(async () => {
  await serve?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

describe("the README walkthrough", () => {
  it("really runs: prompt, disconnect, reconnect to the same warm process, answer from another client", async () => {
    serve = await serveOnTempDir();
    const env = { ...process.env, TZ: "UTC", LC_ALL: "en_US.UTF-8", LANG: "en_US.UTF-8" };
    const { stdout } = await promisify(execFile)(process.execPath, [walkthrough, "--data-dir", serve.dataDir], { cwd: workDir, env });
    expect(stdout).toContain("   agent: Hello, Berth!\n");
    // Read once the host has seen the laptop go: no hold left, and a real release deadline (not the epoch's midnight).
    expect(stdout).toMatch(/ {3}holders: 0; the agent is kept warm until \d/);
    expect(stdout).not.toContain(`kept warm until ${new Date(0).toLocaleTimeString("en-US", { timeZone: "UTC" })}`);
    expect(stdout).toMatch(/pid (\d+): the very same process, warm/);
    expect(stdout).toContain("the waiting turn completed (end_turn); it was answered by the other client:\n   agent: You chose: allow");
  });
});
