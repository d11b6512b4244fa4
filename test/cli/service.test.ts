import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumArgs, chromiumPath } from "../../src/bench/debian-chromium.js";
import { orderlyStopDeadlineMs } from "../../src/config/stop-timings.js";
import { cliMain } from "../server/serve-process.js";

/**
 * `berth service` as a real process, in a temporary HOME and XDG_CONFIG_HOME. No test here may reach a real user
 * manager: XDG_RUNTIME_DIR is an empty directory and no session bus is named, so `systemctl --user` finds none on
 * any machine. docs/service.md lists the manual check on a machine with one.
 */

let root: string;
let home: string;
let configHome: string;
let browser: Browser | undefined;
/** A directory name systemd and XML both have to escape: a space, `%` (specifier), `$` (variable), quotes, `&`, `<`. */
let awkwardDir: string;
const realScript = realpathSync(cliMain);

/** The environment of every run: only what the command needs, nothing of a real user manager. */
function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: configHome, XDG_RUNTIME_DIR: join(root, "run"), ...extra };
}

/** Runs a command in its own process group and waits for it to exit. */
function runProcess(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { detached: true, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const berth = (args: readonly string[], extraEnv: Record<string, string> = {}) => runProcess(process.execPath, [cliMain, ...args], testEnv(extraEnv));

/** The unit `install --print` gives for these flags, with its exit code checked. */
async function printedUnit(...flags: string[]): Promise<string> {
  const printed = await berth(["service", "install", "--print", "--platform", "linux", ...flags]);
  expect(printed.stderr).toBe("");
  expect(printed.code).toBe(0);
  return printed.stdout;
}

const settingOf = (unit: string, name: string) =>
  unit
    .split("\n")
    .filter((line) => line.startsWith(`${name}=`))
    .map((line) => line.slice(name.length + 1));

/** `systemd-analyze verify` on the unit as a user unit, offline: its complaints about berth.service, and its exit code. */
async function verifyUnit(unit: string): Promise<{ code: number | null; complaints: string[] }> {
  const dir = mkdtempSync(join(root, "verify-"));
  const runtime = join(dir, "runtime");
  mkdirSync(runtime, { mode: 0o700 });
  const file = join(dir, "berth.service");
  writeFileSync(file, unit);
  // --user: checked as the user manager would load it (its own runtime directory, so it needs no running manager).
  const verified = await runProcess("systemd-analyze", ["--user", "verify", "--man=no", file], {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_RUNTIME_DIR: runtime,
  });
  // Settings systemd ignores are only warned about: every line naming the unit counts.
  return { code: verified.code, complaints: `${verified.stdout}\n${verified.stderr}`.split("\n").filter((line) => line.includes("berth.service")) };
}

/**
 * Runs in the browser (as text: this project's types have no DOM): parses a plist with the browser's XML parser and
 * reads it into JSON values. A stray `&` or `<` is a parse error; escaped text reads back as it was.
 */
const readPlist = `(xml) => {
  const doc = new DOMParser().parseFromString(xml, "application/xml");
  const read = (node) => {
    if (node.tagName === "dict") {
      const children = [...node.children];
      const entries = [];
      for (let i = 0; i < children.length; i += 2) entries.push([children[i].textContent, read(children[i + 1])]);
      return Object.fromEntries(entries);
    }
    if (node.tagName === "array") return [...node.children].map(read);
    if (node.tagName === "integer") return Number(node.textContent);
    if (node.tagName === "true" || node.tagName === "false") return node.tagName === "true";
    return node.textContent;
  };
  const top = doc.documentElement.firstElementChild;
  return { error: doc.querySelector("parsererror")?.textContent ?? null, root: doc.documentElement.tagName, value: top ? read(top) : null };
}`;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "berth-service-")));
  home = join(root, "home");
  configHome = join(root, "config");
  awkwardDir = join(root, `Ada's 100% $HOME "dir" & <more>`);
  for (const dir of [home, configHome, awkwardDir]) mkdirSync(dir, { recursive: true });
  mkdirSync(join(root, "run"), { mode: 0o700 });
});

afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("berth service install --print on Linux: the systemd user unit", () => {
  it("passes systemd-analyze verify as a user unit, awkward paths included", async () => {
    const config = join(awkwardDir, "config.json");
    writeFileSync(config, JSON.stringify({ stopTimeout: "20s" }));
    const unit = await printedUnit("--config", config, "--data-dir", join(awkwardDir, "data"), "--host", "127.0.0.1", "--port", "7431");
    expect(await verifyUnit(unit)).toEqual({ code: 0, complaints: [] });
  });

  it("systemd-analyze verify would catch a broken unit (the check itself works)", async () => {
    const unit = await printedUnit();
    const broken = unit
      .replace("KillMode=mixed", "KillMode=gently")
      .replace(`ExecStart=${process.execPath}`, `ExecStart=${process.execPath}-missing`);
    const verified = await verifyUnit(broken);
    expect(verified.code).not.toBe(0);
    expect(verified.complaints.join("\n")).toMatch(/kill mode/);
    expect(verified.complaints.join("\n")).toMatch(/is not executable/);
  });

  it("runs node and the real CLI script with serve and the flags given, paths absolute and quoted for systemd", async () => {
    const config = join(awkwardDir, "config.json");
    writeFileSync(config, "{}");
    const unit = await printedUnit(
      ...["--config", config, "--data-dir", join(awkwardDir, "data"), "--host", "0.0.0.0", "--port", "7431", "--release-grace", "30s"],
      ...["--allowed-host", "a.example", "--allowed-host", "b.example"],
    );
    // Inside double quotes: `%` is `%%` (no specifier), `$` is `$$` (no variable), `"` is `\"`.
    const quoted = `"${root}/Ada's 100%% $$HOME \\"dir\\" & <more>`;
    expect(settingOf(unit, "ExecStart")).toEqual([
      `${process.execPath} ${realScript} serve --host 0.0.0.0 --port 7431 --config ${quoted}/config.json" --data-dir ${quoted}/data" ` +
        "--release-grace 30s --allowed-host a.example --allowed-host b.example",
    ]);
    // A relative --data-dir is made absolute: the service does not run in this directory.
    const relative = await berth(["service", "install", "--print", "--platform", "linux", "--data-dir", "here"]);
    expect(settingOf(relative.stdout, "ExecStart")[0]).toContain(`--data-dir ${join(process.cwd(), "here")}`);
  });

  it("stops Berth alone by SIGTERM and waits longer than its orderly stop, which a configured stopTimeout lengthens", async () => {
    const slow = join(root, "slow.json");
    writeFileSync(slow, JSON.stringify({ stopTimeout: "40s" }));
    const byDefault = await printedUnit();
    const slowUnit = await printedUnit("--config", slow);
    expect(settingOf(byDefault, "KillMode")).toEqual(["mixed"]);
    expect(settingOf(slowUnit, "KillMode")).toEqual(["mixed"]);
    const [defaultTimeout] = settingOf(byDefault, "TimeoutStopSec").map(Number);
    const [slowTimeout] = settingOf(slowUnit, "TimeoutStopSec").map(Number);
    expect(defaultTimeout! * 1000).toBeGreaterThan(orderlyStopDeadlineMs(3_000));
    expect(slowTimeout! * 1000).toBeGreaterThan(orderlyStopDeadlineMs(40_000));
    expect(slowTimeout).toBeGreaterThan(defaultTimeout!);
  });

  it("restarts on failure but not on a bad configuration, keeps PATH, and is wanted by default.target", async () => {
    const path = `${process.env.PATH}:${awkwardDir}`;
    const unit = (await berth(["service", "install", "--print", "--platform", "linux"], { PATH: path })).stdout;
    expect(settingOf(unit, "Restart")).toEqual(["on-failure"]);
    expect(Number(settingOf(unit, "RestartSec")[0])).toBeLessThanOrEqual(10);
    expect(settingOf(unit, "RestartPreventExitStatus")).toEqual(["2"]);
    expect(settingOf(unit, "Environment")).toContain(`"PATH=${path.replaceAll("%", "%%").replaceAll('"', '\\"')}"`);
    expect(settingOf(unit, "Environment")).toContain(`XDG_CONFIG_HOME=${configHome}`);
    expect(settingOf(unit, "WantedBy")).toEqual(["default.target"]);
  });

  it("is the unit docs/service.md shows, line for line", async () => {
    const doc = readFileSync(new URL("../../docs/service.md", import.meta.url), "utf8");
    const shown = /```ini\n([\s\S]*?)```/.exec(doc)![1];
    const printed = await runProcess(
      process.execPath,
      [cliMain, "service", "install", "--print", "--platform", "linux", "--port", "7420", "--data-dir", "/home/ada/Berth data"],
      { PATH: "/home/ada/.local/bin:/usr/local/bin:/usr/bin:/bin", HOME: home },
    );
    expect(
      printed.stdout.replace(`${process.execPath} ${realScript}`, "/usr/bin/node /home/ada/.local/lib/node_modules/berth/dist/cli/main.js"),
    ).toBe(shown);
  });

  it("refuses a bad flag or configuration with exit 2 and names it", async () => {
    const badPort = await berth(["service", "install", "--print", "--port", "seventy"]);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('--port: expected a port number from 0 to 65535, got "seventy"');
    const missing = await berth(["service", "install", "--print", "--config", join(root, "no-such.json")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`configuration file not found: ${join(root, "no-such.json")}`);
  });
});

describe("berth service install --print --platform darwin: the launchd agent", () => {
  it("is a well-formed plist whose values read back exactly, escaped", async () => {
    const path = `${process.env.PATH}:${awkwardDir}`;
    const printed = await berth(["service", "install", "--print", "--platform", "darwin", "--data-dir", awkwardDir], { PATH: path });
    expect(printed.code).toBe(0);
    browser = await chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs] });
    const page = await browser.newPage();
    const plist = (await page.evaluate(`(${readPlist})(${JSON.stringify(printed.stdout)})`)) as {
      error: string | null;
      root: string;
      value: unknown;
    };
    expect(plist.error).toBeNull();
    expect(plist.root).toBe("plist");
    const unit = await printedUnit("--data-dir", awkwardDir);
    expect(plist.value).toEqual({
      Label: "dev.berth.host",
      ProgramArguments: [process.execPath, realScript, "serve", "--data-dir", awkwardDir],
      EnvironmentVariables: { PATH: path, XDG_CONFIG_HOME: configHome },
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ExitTimeOut: Number(settingOf(unit, "TimeoutStopSec")[0]),
      StandardOutPath: join(home, "Library", "Logs", "berth", "berth.log"),
      StandardErrorPath: join(home, "Library", "Logs", "berth", "berth.log"),
    });
  });
});

describe("berth service without a systemd user manager (a container, CI)", () => {
  const unitFile = () => join(configHome, "systemd", "user", "berth.service");

  it("status says it is not installed and that no user manager is reachable", async () => {
    const status = await berth(["service", "status", "--platform", "linux"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Not installed: there is no ${unitFile()}`);
    expect(status.stdout).toContain("no systemd user manager is reachable");
  });

  it("install fails with a clear message, exit 1, and writes nothing", async () => {
    const install = await berth(["service", "install", "--platform", "linux", "--port", "7432"]);
    expect(install.code).toBe(1);
    expect(install.stderr).toMatch(/^berth service install: no systemd user manager is reachable \(systemctl --user: .+\)\./);
    expect(install.stderr).toContain("nothing was written");
    expect(install.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(configHome, "systemd"))).toBe(false);
  });

  it("uninstall of nothing says so; with a unit file but no manager it stops nothing and keeps the file", async () => {
    const nothing = await berth(["service", "uninstall", "--platform", "linux"]);
    expect(nothing).toMatchObject({ code: 0, stdout: `Not installed: there is no ${unitFile()}\n` });
    mkdirSync(join(configHome, "systemd", "user"), { recursive: true });
    writeFileSync(unitFile(), await printedUnit());
    try {
      const kept = await berth(["service", "uninstall", "--platform", "linux"]);
      expect(kept.code).toBe(1);
      expect(kept.stderr).toContain(`no systemd user manager is reachable`);
      expect(kept.stderr).toContain(`${unitFile()} stays, nothing was stopped`);
      expect(existsSync(unitFile())).toBe(true);
      const status = await berth(["service", "status", "--platform", "linux"]);
      expect(status.stdout).toContain(`Installed: ${unitFile()}`);
    } finally {
      rmSync(join(configHome, "systemd"), { recursive: true, force: true });
    }
  });

  it("another platform is a usage error, exit 2", async () => {
    const other = await berth(["service", "status", "--platform", "win32"]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("berth service status: services run on linux (systemd) and darwin (launchd) only, not on win32");
  });
});

/**
 * A stand-in for systemctl that only records what it is asked and answers "enabled"/"active": it checks the order of
 * the steps and what install and uninstall do with the files. It is not systemd (docs/service.md: the manual check).
 */
describe("berth service install and uninstall, against a stand-in systemctl that records its calls", () => {
  const unitFile = () => join(configHome, "systemd", "user", "berth.service");
  let bin: string;
  let log: string;
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trimEnd().split("\n") : []);
  const withStandIn = (args: string[], fail = "") =>
    berth(["service", ...args, "--platform", "linux"], { PATH: `${bin}:${process.env.PATH}`, STAND_IN_LOG: log, STAND_IN_FAIL: fail });

  beforeAll(() => {
    bin = join(root, "stand-in-bin");
    log = join(root, "systemctl-calls");
    mkdirSync(bin);
    writeFileSync(
      join(bin, "systemctl"),
      [
        "#!/bin/sh",
        'printf \'%s\\n\' "$*" >>"$STAND_IN_LOG"',
        'if [ "$2" = "$STAND_IN_FAIL" ]; then echo "Failed to $2 unit: injected" >&2; exit 1; fi',
        'case "$2" in is-enabled) echo enabled ;; is-active) echo active ;; esac',
        "",
      ].join("\n"),
    );
    chmodSync(join(bin, "systemctl"), 0o755);
  });

  it("install writes the unit and the token, reloads, enables and starts; a changed unit restarts; uninstall undoes it", async () => {
    const dataDir = join(root, "service-data");
    const installed = await withStandIn(["install", "--data-dir", dataDir, "--port", "7433"]);
    expect(installed.stderr).toBe("");
    expect(installed.code).toBe(0);
    expect(calls()).toEqual(["--user show --property=Version", "--user daemon-reload", "--user enable --now berth.service"]);
    expect(readFileSync(unitFile(), "utf8")).toBe((await withStandIn(["install", "--print", "--data-dir", dataDir, "--port", "7433"])).stdout);
    expect(statSync(unitFile()).mode & 0o777).toBe(0o600);
    // Made before the first start, which would otherwise print the link with the new token into the journal.
    expect(readFileSync(join(dataDir, "token"), "utf8").length).toBeGreaterThan(16);
    expect(installed.stdout).toContain(`(installed): ${unitFile()}`);
    for (const hint of ["loginctl enable-linger $USER", "journalctl --user -u berth -f", `node dist/cli/main.js token --link --data-dir ${dataDir}`])
      expect(installed.stdout).toContain(hint);

    rmSync(log);
    const again = await withStandIn(["install", "--data-dir", dataDir, "--port", "7433"]);
    expect(again.stdout).toContain("(already installed)");
    expect(calls()).toEqual(["--user show --property=Version", "--user daemon-reload", "--user enable --now berth.service"]);

    rmSync(log);
    const changed = await withStandIn(["install", "--data-dir", dataDir, "--port", "7434"]);
    expect(changed.stdout).toContain("(updated)");
    expect(calls()).toEqual([
      "--user show --property=Version",
      "--user daemon-reload",
      "--user try-restart berth.service",
      "--user enable --now berth.service",
    ]);
    expect(readFileSync(unitFile(), "utf8")).toContain("--port 7434");

    const status = await withStandIn(["status"]);
    expect(status.stdout).toMatch(/^Installed: .*\nenabled: enabled\nactive: {2}active\n/);

    rmSync(log);
    const removed = await withStandIn(["uninstall"]);
    expect(removed).toMatchObject({ code: 0, stdout: `Stopped, disabled and removed: ${unitFile()}\n` });
    expect(calls()).toEqual(["--user show --property=Version", "--user disable --now berth.service", "--user daemon-reload"]);
    expect(existsSync(unitFile())).toBe(false);
    expect(await withStandIn(["status"])).toMatchObject({ code: 0, stdout: `Not installed: there is no ${unitFile()}\n` });
  });

  it("a step systemctl refuses is named with its words, and says where the unit is", async () => {
    const failed = await withStandIn(["install", "--port", "7435", "--data-dir", join(root, "service-data")], "enable");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe(
      `berth service install: systemctl --user enable --now berth.service failed: Failed to enable unit: injected\n` +
        `The systemd user unit is in ${unitFile()}; \`node dist/cli/main.js service uninstall\` removes it\n`,
    );
    rmSync(join(configHome, "systemd"), { recursive: true, force: true });
  });
});
