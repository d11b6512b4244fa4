import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BrowserCapture } from "../../src/host/browser-capture.js";

const dirs: string[] = [];
const captures: BrowserCapture[] = [];

afterEach(async () => {
  await Promise.all(captures.splice(0).map((capture) => capture.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function opened(): Promise<{ capture: BrowserCapture; addresses: string[]; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "berth-capture-"));
  dirs.push(dir);
  const addresses: string[] = [];
  const capture = await BrowserCapture.open(dir, (address) => addresses.push(address));
  captures.push(capture);
  return { capture, addresses, dir };
}

/** Runs `command address` as an agent would, with the capture's environment; its exit code. */
function run(capture: BrowserCapture, command: string, address: string): Promise<number | null> {
  const { env } = capture.command({ command: "agent", args: [], env: {} });
  const child = spawn(command === "$BROWSER" ? env.BROWSER! : command, [address], { env: { ...process.env, ...env }, stdio: "ignore" });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", resolve);
  });
}

describe("the address an agent's login opens", () => {
  it.each(["$BROWSER", "xdg-open"])("reaches the host through %s (the shim exits 0, as a browser that opened it)", async (command) => {
    const { capture, addresses, dir } = await opened();
    expect(await run(capture, command, "https://provider.invalid/authorize?state=S")).toBe(0);
    expect(addresses).toEqual(["https://provider.invalid/authorize?state=S"]);
    expect(statSync(join(dir, "browser")).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "bin", "xdg-open")).mode & 0o777).toBe(0o700);
  });

  it("takes an address only at the path with this login's secret", async () => {
    const { capture, addresses } = await opened();
    const target = new URL(capture.command({ command: "agent", args: [], env: {} }).env.BERTH_LOGIN_CAPTURE!);
    expect(target.hostname).toBe("127.0.0.1");
    const guessed = await fetch(`${target.origin}/guess`, { method: "POST", body: "https://evil.invalid/" });
    expect(guessed.status).toBe(404);
    expect(addresses).toEqual([]);
  });

  it("keeps the agent's own PATH after the shims", async () => {
    const { capture, dir } = await opened();
    const { env } = capture.command({ command: "agent", args: [], env: { PATH: "/opt/agent/bin" } });
    expect(env.PATH).toBe(`${join(dir, "bin")}:/opt/agent/bin`);
  });
});
