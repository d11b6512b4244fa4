import { execFile, spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type SessionNotification } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSTALL_SCRIPTS, installGlobally, pack, type Installed, type Packed } from "../../src/bench/packed-install.js";
import { groupMembers, killLeftovers, waitUntil } from "../support/process-table.js";

const repoDir = fileURLToPath(new URL("../..", import.meta.url));
const packageJson = JSON.parse(readFileSync(join(repoDir, "package.json"), "utf8")) as { name: string; version: string };
const run = promisify(execFile);

let work: string;
let packed: Packed;
let installed: Installed;
/** Where the installed `berth` runs: its own HOME, config and data, and a folder to work in. */
let env: NodeJS.ProcessEnv;
let dataDir: string;
let projectDir: string;
const started: ChildProcess[] = [];

/** The installed command by name, as a user's shell finds it on PATH. */
function installedCommand(name: string, args: readonly string[], stdio: "pipe" | "inherit" = "pipe"): ChildProcess {
  const child = spawn(name, args, { cwd: projectDir, env, detached: true, stdio: ["pipe", "pipe", stdio] });
  started.push(child);
  return child;
}

/** Starts the installed host and reads its first line; the process stays until `stop`. */
async function startHost(command: string, args: readonly string[]): Promise<{ line: string; stop: () => Promise<number | null> }> {
  const host = installedCommand(command, [...args, "--port", "0", "--data-dir", dataDir]);
  let stdout = "";
  let stderr = "";
  host.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  host.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => host.once("exit", resolve));
  await waitUntil(() => stdout.includes("\n") || host.exitCode !== null, `the installed ${command} printed its start-up line`, 30_000);
  if (!stdout.includes("\n")) throw new Error(`the installed ${command} exited ${host.exitCode}: ${stderr}`);
  return {
    line: stdout.split("\n")[0]!,
    stop: async () => {
      host.kill("SIGTERM");
      return exited;
    },
  };
}

beforeAll(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), "berth-package-")));
  const home = join(work, "home");
  dataDir = join(work, "data");
  projectDir = join(work, "project");
  for (const dir of [home, projectDir]) mkdirSync(dir);
  // `npm test` built dist/ already; pack takes it as it is (prepack would build it again under the other tests' feet).
  packed = await pack(repoDir, work);
  // npm keeps its own cache (HOME's): the runtime dependencies `npm ci` fetched are taken from it.
  installed = await installGlobally(packed.tarball, join(work, "prefix"));
  env = {
    PATH: `${join(work, "prefix", "bin")}:${process.env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
  };
}, 900_000);

afterAll(() => {
  for (const child of started) if (child.pid !== undefined) killLeftovers(groupMembers(child.pid));
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("Berth as an npm package", () => {
  it("ships the host, the dashboard and the demo agent, and nothing of the tests or the sources", () => {
    for (const file of [
      "package.json",
      "README.md",
      "LICENSE",
      "dist/cli/main.js",
      "dist/server/serve.js",
      "dist/store/journal-writer-worker.js",
      "dist/agents/demo-agent/main.js",
      "dist/web/index.html",
      "catalogue/registry.json",
    ]) {
      expect(packed.files).toContain(file);
    }
    expect(packed.files.some((file) => file.startsWith("dist/web/assets/") && file.endsWith(".js"))).toBe(true);
    const unwanted = packed.files.filter((file) => /^(test|src|web|scripts|\.ci)\/|^dist\/(bench|examples)\/|\.map$/.test(file));
    expect(unwanted).toEqual([]);
  });

  it("the README's install commands name this package, with the one install script it needs allowed, as this test installs it", () => {
    const readme = readFileSync(join(repoDir, "README.md"), "utf8");
    expect(readme).toContain(`npx --allow-scripts=${INSTALL_SCRIPTS} ${packageJson.name}`);
    expect(readme).toContain(`npm install -g --allow-scripts=${INSTALL_SCRIPTS} ${packageJson.name}\n`);
  });

  it("installs globally from its tarball with no engine or install-script warning on this Node, SQLite's binding prebuilt", () => {
    // Deprecation notices of packages further down are the registry's news, not this package's defects: left out.
    expect(installed.output).not.toMatch(/EBADENGINE|install-scripts|Unknown env config/);
    // As a user with network gets it (src/bench/packed-install.ts offers it): a compile here is minutes of CPU.
    expect(installed.sqliteCompiled).toBe(false);
  });

  it("npx-style start with no command, then `berth serve`, the printed hint, and a prompt through `berth connect`", async () => {
    // `npx berth-acp` runs the bin named after the package; with no command it is `berth serve`.
    const first = await startHost(packageJson.name, []);
    expect(first.line).toMatch(/^Berth is running: http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+ \(ACP: ws:\/\/127\.0\.0\.1:\d+\/acp\)$/);
    expect(await first.stop()).toBe(0);

    // A later start leaves the token out and names the installed command, which works as printed.
    const host = await startHost("berth", ["serve"]);
    expect(host.line.endsWith(`; dashboard link: berth token --link --data-dir ${dataDir}`)).toBe(true);
    const hint = /dashboard link: (.*)$/.exec(host.line)![1]!.split(" ");
    const { stdout: link } = await run(hint[0]!, hint.slice(1), { cwd: projectDir, env });
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+\n$/);

    const bridge = installedCommand("berth", ["connect", "--data-dir", dataDir], "inherit");
    const updates: SessionNotification[] = [];
    const editor = client({ name: "package-test" })
      .onNotification(methods.client.session.update, ({ params }) => void updates.push(params))
      .connect(
        ndJsonStream(Writable.toWeb(bridge.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(bridge.stdout!) as ReadableStream<Uint8Array>),
      );
    const initialized = await editor.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    expect(initialized.protocolVersion).toBe(PROTOCOL_VERSION);
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: projectDir, mcpServers: [] });
    const { stopReason } = await editor.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "hello from the installed package" }],
    });
    expect(stopReason).toBe("end_turn");
    const said = updates
      .map((update) => update.update)
      .flatMap((update) => (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? [update.content.text] : []))
      .join("");
    expect(said).toContain("hello from the installed package");

    const bridgeExited = new Promise<number | null>((resolve) => bridge.once("exit", resolve));
    bridge.stdin!.end();
    expect(await bridgeExited).toBe(0);
    expect(await host.stop()).toBe(0);
    for (const child of started) expect(groupMembers(child.pid!)).toEqual([]);
  }, 120_000);

  it("run from npx's cache, its hint says npx and it refuses to become a service there", async () => {
    // The installed package where `npx berth-acp` unpacks it: npm's cache, `_npx/<hash>/node_modules/`.
    const cached = join(work, "home", ".npm", "_npx", "0123abcd", "node_modules", packageJson.name);
    cpSync(join(installed.prefix, "lib", "node_modules", packageJson.name), cached, { recursive: true, verbatimSymlinks: true });
    const cli = join(cached, "dist", "cli", "main.js");
    const host = await startHost(process.execPath, [cli]);
    expect(host.line.endsWith(`; dashboard link: npx ${packageJson.name} token --link --data-dir ${dataDir}`)).toBe(true);
    expect(await host.stop()).toBe(0);
    const refused = await run(process.execPath, [cli, "service", "install", "--data-dir", dataDir], { cwd: projectDir, env }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining("install it first (npm install -g") });
  }, 60_000);
});
