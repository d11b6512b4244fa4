import { execFile } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The one dependency with an install script (it compiles SQLite): npm 11 asks for it by name outside a project. */
export const INSTALL_SCRIPTS = "better-sqlite3";

export interface Packed {
  readonly tarball: string;
  readonly packedBytes: number;
  readonly unpackedBytes: number;
  /** Paths inside the package, e.g. `dist/cli/main.js`. */
  readonly files: readonly string[];
}

export interface Installed {
  /** The `npm install -g --prefix` folder: `bin/berth`, `lib/node_modules/<name>/`. */
  readonly prefix: string;
  /** Every file of the install, runtime dependencies included. */
  readonly installedBytes: number;
  readonly seconds: number;
  /** Whether better-sqlite3 was compiled (its prebuilt binary not found): minutes of CPU where it was. */
  readonly sqliteCompiled: boolean;
  /** What npm printed (its warnings go to stderr). */
  readonly output: string;
}

/** `npm pack` of the checkout at `repoDir` into `outDir`, without building (the caller built `dist/`). */
export async function pack(repoDir: string, outDir: string): Promise<Packed> {
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", outDir], { cwd: repoDir });
  const [result] = JSON.parse(stdout) as Array<{ filename: string; size: number; unpackedSize: number; files: Array<{ path: string }> }>;
  if (!result) throw new Error(`npm pack printed no package: ${stdout}`);
  return {
    tarball: join(outDir, result.filename),
    packedBytes: result.size,
    unpackedBytes: result.unpackedSize,
    files: result.files.map((file) => file.path),
  };
}

/**
 * Installs a packed tarball as a user would (`npm install -g`), into its own prefix; runtime dependencies from the
 * registry. better-sqlite3's binary comes as a user with network gets it, prebuilt: from this checkout's own build,
 * offered inside the prefix for the install's time (see {@link offerPrebuiltSqlite}), as the download from GitHub is
 * not reachable everywhere Berth is built.
 */
export async function installGlobally(tarball: string, prefix: string, env: NodeJS.ProcessEnv = process.env): Promise<Installed> {
  const offered = await offerPrebuiltSqlite(prefix);
  const started = performance.now();
  const { stdout, stderr } = await run(
    "npm",
    ["install", "--global", "--prefix", prefix, `--allow-scripts=${INSTALL_SCRIPTS}`, "--prefer-offline", "--no-audit", "--no-fund", tarball],
    { env, maxBuffer: 16 * 1024 * 1024 },
  ).finally(() => {
    for (const path of offered) rmSync(path, { recursive: true, force: true });
  });
  const seconds = (performance.now() - started) / 1000;
  return { prefix, installedBytes: bytesUnder(prefix), seconds, sqliteCompiled: sqliteCompiledIn(prefix), output: stdout + stderr };
}

/**
 * Whether the better-sqlite3 of a global install under `prefix` was compiled: node-gyp leaves its Makefile and object
 * files beside the binary, a prebuilt binary comes alone. It sits in the installed package's own `node_modules`.
 */
function sqliteCompiledIn(prefix: string): boolean {
  const packages = join(prefix, "lib", "node_modules");
  const found = readdirSync(packages)
    .map((name) => join(packages, name, "node_modules", "better-sqlite3"))
    .filter((dir) => existsSync(join(dir, "package.json")));
  if (found.length === 0) throw new Error(`better-sqlite3 is not in the install under ${packages}`);
  return found.some((dir) => existsSync(join(dir, "build", "Makefile")) || existsSync(join(dir, "build", "Release", "obj.target")));
}

/**
 * better-sqlite3's install script (`prebuild-install || node-gyp rebuild`) downloads a prebuilt binary from GitHub,
 * which machines with only the npm registry cannot reach: there it compiles SQLite, minutes of CPU. prebuild-install
 * first looks for the same archive in its `local-prebuilds` folder, which a `.prebuild-installrc` in a folder above
 * the install names (an `npm_config_` variable would do too, but npm warns of it as an unknown setting): both are
 * written into `prefix`, the archive made of the binary this checkout's `npm ci` got. Returns what it wrote.
 */
async function offerPrebuiltSqlite(prefix: string): Promise<string[]> {
  const require = createRequire(import.meta.url);
  const packageDir = dirname(require.resolve("better-sqlite3/package.json"));
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string };
  const prebuilds = join(prefix, ".prebuilds");
  const rc = join(prefix, ".prebuild-installrc");
  mkdirSync(prebuilds, { recursive: true });
  // prebuild-install's archive name, for glibc Linux and this Node's ABI.
  const archive = join(prebuilds, `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`);
  await run("tar", ["-czf", archive, "-C", packageDir, "build/Release/better_sqlite3.node"]);
  writeFileSync(rc, `local-prebuilds=${prebuilds}\n`);
  return [prebuilds, rc];
}

/** The size of every file under `dir`, links not followed (as `du --apparent-size` counts). */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? bytesUnder(path) : lstatSync(path).size;
  }
  return total;
}
