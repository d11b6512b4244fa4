import { createHash, randomBytes } from "node:crypto";
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createInterface } from "node:readline";
import { formatDuration } from "../config/durations.js";
import { makePrivate } from "../config/paths.js";
import { findExecutable } from "../processes/find-executable.js";
import { describeExit, spawnGroup } from "../processes/index.js";
import { type Catalogue, catalogueEntryOf, type CatalogueEntry, type DistributionKind, platformKey, resolveLocation } from "./catalogue.js";
import { installPaths, type InstalledAgent, readInstalledAgents, writeInstalledAgents } from "./installed-agents.js";

/** An install or removal refused or failed; the message says why, and nothing of it is left behind. */
export class InstallError extends Error {
  override readonly name = "InstallError";
  constructor(
    message: string,
    readonly refusal: InstallRefusal = "failed",
  ) {
    super(message);
  }
}

/** Why an install was refused before it began (`failed`: it began and failed). */
export type InstallRefusal = "unknown_version" | "installed" | "not_installed" | "no_distribution" | "failed";

/** `add` installs an agent not installed yet; `upgrade` replaces an installed one with the registry's version. */
export type InstallMode = "add" | "upgrade";

export interface InstallRequest {
  readonly dataDir: string;
  readonly catalogue: Catalogue;
  readonly id: string;
  readonly mode: InstallMode;
  /** Must be the registry's version of the agent when given (a registry lists one version of each). */
  readonly version?: string;
  /** Which of the entry's distributions (default: npx, else this platform's binary, else uvx). */
  readonly distribution?: DistributionKind;
  /** Each line of progress: the steps, and what npm, tar, unzip and uv print. */
  readonly progress: (line: string) => void;
  /** Aborting stops the running step's process group; the install then fails and leaves nothing. */
  readonly signal?: AbortSignal;
  /** How long one step may take (default {@link INSTALL_STEP_LIMIT_MS}). */
  readonly stepLimitMs?: number;
}

/**
 * How long one step of an install (a download; npm, tar, unzip or uv) may take before it is stopped and the install
 * fails: a stalled one would otherwise hold the agent (every later install or removal of it refused) until a restart.
 */
const INSTALL_STEP_LIMIT_MS = 10 * 60_000;

/** What an install would do, or an {@link InstallError} (a {@link CatalogueError} for an unknown id) saying why it cannot. */
export function checkInstall(request: Omit<InstallRequest, "progress" | "signal">): {
  entry: CatalogueEntry;
  kind: DistributionKind;
  previous: InstalledAgent | undefined;
} {
  const { dataDir, catalogue, id, mode } = request;
  const entry = catalogueEntryOf(catalogue, id);
  if (request.version !== undefined && request.version !== entry.version)
    throw new InstallError(
      `no version "${request.version}" of agent "${id}" in the agent registry ${catalogue.source} (it has ${entry.version})`,
      "unknown_version",
    );
  const previous = readInstalledAgents(dataDir)[id];
  if (mode === "add" && previous)
    throw new InstallError(
      `agent "${id}" is already installed (version ${previous.version}); upgrade it with \`berth agents upgrade ${id}\``,
      "installed",
    );
  if (mode === "upgrade" && !previous)
    throw new InstallError(`agent "${id}" is not installed; add it with \`berth agents add ${id}\``, "not_installed");
  if (mode === "upgrade" && previous?.version === entry.version)
    throw new InstallError(`agent "${id}" is already at the registry's version ${entry.version}`, "installed");
  // An upgrade keeps the distribution the agent came from, while the registry still offers it.
  const kind = request.distribution ?? (previous && entry.distribution[previous.distribution] ? previous.distribution : defaultDistribution(entry));
  if (kind === "uvx") uvCommand(id);
  if (!entry.distribution[kind])
    throw new InstallError(`agent "${id}" has no ${kind} distribution (it has: ${Object.keys(entry.distribution).join(", ")})`, "no_distribution");
  return { entry, kind, previous };
}

/**
 * Installs an agent from a registry entry into `<dataDir>/agents/<id>/<version>/` and lists it in
 * `<dataDir>/installed-agents.json`. Everything is built in a directory of its own beside the
 * version's and renamed into place; the list is replaced in one rename last. A failure removes
 * what it built; a previously installed version and the list stay as they were.
 */
export async function installAgent(request: InstallRequest): Promise<InstalledAgent> {
  const { dataDir, catalogue, id, progress } = request;
  const { entry, kind, previous } = checkInstall(request);
  const paths = installPaths(dataDir);
  const target = paths.versionDir(id, entry.version);
  // Beside the target, on the same file system: the final rename is atomic.
  const staging = `${target}.partial-${randomBytes(4).toString("hex")}`;
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  progress(`installing ${id} ${entry.version} (${kind}) into ${target}`);
  let agent: InstalledAgent;
  try {
    const built = await build(kind, { entry, catalogue, staging, target, request });
    // npm, tar and uv leave the user's umask (0644, 0755): private as the rest of the data directory, so that the
    // next start finds nothing to tighten.
    makePrivate(kind === "uvx" ? target : staging);
    // A directory of this version no list names is what an interrupted run left: replaced.
    if (kind !== "uvx") {
      rmSync(target, { recursive: true, force: true });
      renameSync(staging, target);
    }
    agent = { version: entry.version, distribution: kind, dir: target, ...built, registry: catalogue.source, installedAt: Date.now() };
    // The commit: until this rename the list names the previous version (or none), after it this one.
    writeInstalledAgents(dataDir, { ...readInstalledAgents(dataDir), [id]: agent });
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    // Never a listed version: an add has none, an upgrade another.
    rmSync(target, { recursive: true, force: true });
    // A first install leaves no empty folder of the agent behind either.
    if (!previous) rmSync(dirname(target), { recursive: true, force: true });
    throw error instanceof InstallError ? error : new InstallError(`installing ${id} ${entry.version} failed: ${(error as Error).message}`);
  }
  progress(`installed ${id} ${entry.version}: ${[agent.command, ...agent.args].join(" ")}`);
  // The replaced version stays for children still running from it; any older one goes.
  removeVersionsExcept(dataDir, id, [entry.version, ...(previous ? [previous.version] : [])]);
  return agent;
}

/**
 * When a removed agent's directory goes: `now` with no host running (no child can run from it); `at next start`
 * under a running host, whose sessions keep their running agent until it stops (the start removes it, see
 * {@link removeUnlistedAgents}).
 */
export type RemovedFiles = "now" | "at next start";

/** Removes an installed agent: its entry in the list first, then (`now`) its directories. */
export function removeAgent(dataDir: string, id: string, files: RemovedFiles): InstalledAgent {
  const installed = readInstalledAgents(dataDir);
  const agent = installed[id];
  if (!agent) throw new InstallError(`agent "${id}" is not installed (installed: ${Object.keys(installed).join(", ") || "none"})`, "not_installed");
  const { [id]: _removed, ...rest } = installed;
  writeInstalledAgents(dataDir, rest);
  if (files === "now") rmSync(join(installPaths(dataDir).agents, id), { recursive: true, force: true });
  return agent;
}

/**
 * Removes the directories of agents the list no longer names (removed while a session ran them): for a host's start,
 * before any child runs. Returns their ids. A damaged list is an {@link InstalledListError}, and nothing is removed.
 */
export function removeUnlistedAgents(dataDir: string): string[] {
  const installed = readInstalledAgents(dataDir);
  const { agents } = installPaths(dataDir);
  if (!existsSync(agents)) return [];
  const unlisted = readdirSync(agents).filter((id) => !Object.hasOwn(installed, id));
  for (const id of unlisted) rmSync(join(agents, id), { recursive: true, force: true });
  return unlisted;
}

function removeVersionsExcept(dataDir: string, id: string, keep: readonly string[]): void {
  const dir = join(installPaths(dataDir).agents, id);
  for (const name of readdirSync(dir)) if (!keep.includes(name)) rmSync(join(dir, name), { recursive: true, force: true });
}

function defaultDistribution(entry: CatalogueEntry): DistributionKind {
  const { npx, binary, uvx } = entry.distribution;
  if (npx) return "npx";
  if (binary?.[platformKey()]) return "binary";
  if (uvx) return "uvx";
  throw new InstallError(
    `agent "${entry.id}" has no distribution for this machine: binaries for ${Object.keys(binary ?? {}).join(", ")}, this is ${platformKey()}`,
    "no_distribution",
  );
}

interface BuildContext {
  readonly entry: CatalogueEntry;
  readonly catalogue: Catalogue;
  readonly staging: string;
  readonly target: string;
  readonly request: InstallRequest;
}

type Built = Pick<InstalledAgent, "command" | "args" | "env">;

function build(kind: DistributionKind, context: BuildContext): Promise<Built> {
  if (kind === "npx") return buildNpm(context);
  if (kind === "binary") return buildBinary(context);
  return buildUv(context);
}

/** A package spec that is a path (or npm's `file:`) names a tarball or directory, not a registry package. */
function isPathSpec(spec: string): boolean {
  return spec.startsWith("file:") || spec.startsWith("/") || spec.startsWith("./") || spec.startsWith("../");
}

/** `name@version`: the registry's `package` may carry its version already (`@scope/name@1.2.3`). */
function packageName(spec: string): string {
  const at = spec.indexOf("@", 1);
  return at === -1 ? spec : spec.slice(0, at);
}

async function buildNpm({ entry, catalogue, staging, target, request }: BuildContext): Promise<Built> {
  const npx = entry.distribution.npx;
  if (!npx) throw new InstallError(`agent "${entry.id}" has no npx distribution`);
  const spec = isPathSpec(npx.package)
    ? resolveLocation(catalogue, npx.package.replace(/^file:/, ""))
    : packageName(npx.package) === npx.package
      ? `${npx.package}@${entry.version}`
      : npx.package;
  // The prefix is a project of its own: its install scripts are the agent package's alone (npm 11's allowScripts).
  const project = isPathSpec(npx.package) ? {} : { allowScripts: { [packageName(npx.package)]: true } };
  writeFileSync(join(staging, "package.json"), `${JSON.stringify({ name: `berth-agent-${entry.id}`, private: true, ...project })}\n`, {
    mode: 0o600,
  });
  const npm = npmCommand();
  await run(
    npm.command,
    [...npm.args, "install", "--prefix", staging, "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=warn", spec],
    staging,
    npmFreeEnvironment(),
    request,
  );
  const dependencies =
    (JSON.parse(readFileSync(join(staging, "package.json"), "utf8")) as { dependencies?: Record<string, string> }).dependencies ?? {};
  const [name] = Object.keys(dependencies);
  if (name === undefined) throw new InstallError(`npm installed nothing from ${spec}`);
  const bin = binOf(name, join(staging, "node_modules", name, "package.json"));
  return { command: join(target, "node_modules", ".bin", bin), args: npx.args, env: npx.env };
}

/** The package's command: its only `bin`, or the one named after the package. */
function binOf(name: string, manifestPath: string): string {
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { bin?: string | Record<string, string> };
  const unscoped = name.replace(/^@[^/]+\//, "");
  if (typeof manifest.bin === "string") return unscoped;
  const bins = Object.keys(manifest.bin ?? {});
  if (bins.length === 1) return bins[0]!;
  if (bins.includes(unscoped)) return unscoped;
  throw new InstallError(
    `package ${name} has ${bins.length === 0 ? "no command (bin)" : `several commands (${bins.join(", ")}) and none named ${unscoped}`}`,
  );
}

/**
 * The npm that came with this Node: beside `node` itself, else `npm` on PATH. Under `npx berth-acp` (or an npm
 * script) the environment carries npm's own settings (`npm_config_global`, `npm_config_prefix`, a cache that npx
 * may clean): they are left out, so an install goes into its prefix and nowhere else, whoever started Berth.
 */
function npmCommand(): { command: string; args: string[] } {
  const besideNode = join(process.execPath, "..", "npm");
  if (existsSync(besideNode)) return { command: besideNode, args: [] };
  const found = findExecutable("npm", process.cwd(), process.env.PATH);
  if ("path" in found) return { command: found.path, args: [] };
  throw new InstallError("npm is not installed (looked beside node and on PATH): an npx distribution needs it");
}

function npmFreeEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
}

async function buildBinary({ entry, catalogue, staging, target, request }: BuildContext): Promise<Built> {
  const platform = platformKey();
  const binary = entry.distribution.binary?.[platform];
  if (!binary)
    throw new InstallError(
      `agent "${entry.id}" has no binary for ${platform} (it has: ${Object.keys(entry.distribution.binary ?? {}).join(", ") || "none"})`,
    );
  const location = resolveLocation(catalogue, binary.archive);
  const archiveName = basename(new URL(location, "file:///").pathname);
  const download = join(staging, ".download");
  mkdirSync(download, { mode: 0o700 });
  const archive = join(download, archiveName);
  request.progress(`downloading ${location}`);
  await step(`downloading ${location}`, request, (signal) => copyTo(location, archive, signal));
  const digest = await sha256Of(archive);
  if (binary.sha256 !== undefined && digest !== binary.sha256.toLowerCase())
    throw new InstallError(`the sha256 of ${location} is ${digest}, the registry says ${binary.sha256.toLowerCase()}: refused`);
  request.progress(binary.sha256 === undefined ? `sha256 ${digest} (the registry gives none to check)` : `sha256 ${digest} checked`);
  if (/\.(tar\.gz|tgz|tar\.xz|tar\.bz2|tar)$/i.test(archiveName)) await run("tar", ["-xf", archive, "-C", staging], staging, process.env, request);
  else if (/\.zip$/i.test(archiveName)) await run("unzip", ["-q", archive, "-d", staging], staging, process.env, request);
  else throw new InstallError(`cannot extract ${archiveName}: expected a .tar.gz, .tgz, .tar.xz, .tar.bz2, .tar or .zip archive`);
  rmSync(download, { recursive: true, force: true });
  const command = resolve(staging, binary.cmd);
  if (relative(staging, command).startsWith("..")) throw new InstallError(`the binary's cmd ${binary.cmd} points outside its archive`);
  if (!existsSync(command) || !statSync(command).isFile()) throw new InstallError(`the archive has no ${binary.cmd} (the registry's cmd)`);
  return { command: join(target, relative(staging, command)), args: binary.args, env: binary.env };
}

async function copyTo(location: string, path: string, signal: AbortSignal): Promise<void> {
  if (!/^https?:\/\//i.test(location)) {
    await pipeline(createReadStream(location), createWriteStream(path, { mode: 0o600 }), { signal });
    return;
  }
  const response = await fetch(location, { signal });
  if (!response.ok || !response.body) throw new InstallError(`downloading ${location} failed with HTTP ${response.status}`);
  await pipeline(Readable.fromWeb(response.body as import("node:stream/web").ReadableStream), createWriteStream(path, { mode: 0o600 }), { signal });
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

function uvCommand(agentId: string): string {
  const uv = findExecutable("uv", process.cwd(), process.env.PATH);
  if ("path" in uv) return uv.path;
  throw new InstallError(`the uvx distribution of "${agentId}" needs uv (https://docs.astral.sh/uv/), which is not on PATH`, "no_distribution");
}

/** uv's tools keep absolute paths in their environments: this one is built where it stays (listed only once it works). */
async function buildUv({ entry, target, staging, request }: BuildContext): Promise<Built> {
  const uvx = entry.distribution.uvx;
  if (!uvx) throw new InstallError(`agent "${entry.id}" has no uvx distribution`);
  const uv = uvCommand(entry.id);
  rmSync(staging, { recursive: true, force: true });
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true, mode: 0o700 });
  const bin = join(target, "bin");
  const env = { ...process.env, UV_TOOL_DIR: join(target, "tools"), UV_TOOL_BIN_DIR: bin };
  await run(uv, ["tool", "install", uvx.package], target, env, request);
  const commands = readdirSync(bin);
  const name = packageName(uvx.package).replace(/[[=<>].*$/, "");
  const command = commands.length === 1 ? commands[0]! : commands.find((file) => file === name);
  if (command === undefined) throw new InstallError(`uv installed ${commands.join(", ") || "no command"} for ${uvx.package}; expected one`);
  return { command: join(bin, command), args: uvx.args, env: uvx.env };
}

/** Runs one step in a process group of its own; its output lines are progress, and a failure names the step and its last lines. */
async function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, request: InstallRequest): Promise<void> {
  const label = basename(command);
  request.progress(`$ ${label} ${args.join(" ")}`);
  await step(label, request, (signal) => runStopping({ command, args, cwd, env, label }, request.progress, signal));
}

async function runStopping(
  spec: { command: string; args: readonly string[]; cwd: string; env: NodeJS.ProcessEnv; label: string },
  progress: (line: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const { command, args, cwd, env, label } = spec;
  const group = await spawnGroup({ command, args, cwd, env, kind: "install", label });
  const stop = () => void group.stop();
  signal.addEventListener("abort", stop, { once: true });
  const last: string[] = [];
  const read = (stream: NodeJS.ReadableStream | null) =>
    stream &&
    createInterface({ input: stream }).on("line", (line) => {
      progress(line);
      last.push(line);
      if (last.length > 5) last.shift();
    });
  read(group.child.stdout);
  read(group.child.stderr);
  try {
    const status = await group.exited;
    await group.outputDrained();
    if (signal.aborted) throw new InstallError(`${label} was stopped: the install was cancelled`);
    if (status.exitCode !== 0) throw new InstallError(`${label} failed (${describeExit(status)})${last.length ? `: ${last.join(" / ")}` : ""}`);
  } finally {
    signal.removeEventListener("abort", stop);
    await group.stop();
  }
}

/** Runs one step under the install's signal and the step's time limit; a step over the limit fails naming it. */
async function step<T>(what: string, request: InstallRequest, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const limitMs = request.stepLimitMs ?? INSTALL_STEP_LIMIT_MS;
  const overTime = AbortSignal.timeout(limitMs);
  try {
    return await work(request.signal ? AbortSignal.any([request.signal, overTime]) : overTime);
  } catch (error) {
    if (overTime.aborted && !request.signal?.aborted) throw new InstallError(`${what} took longer than ${formatDuration(limitMs)}: stopped`);
    throw error;
  }
}
