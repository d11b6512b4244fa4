import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * Many tests run the compiled code, not the sources: `berth serve` and the other CLI commands, the
 * demo agent, the journal writer's worker thread, the dashboard bundle. This names every source that
 * changed since `npm run build` made its output, so a run never tests old code without saying so.
 * `root` is a checkout: `src/**\/*.ts` compiles to `dist/**\/*.js`, one file each; `web/index.html`,
 * `web/src/` and `web/public/` bundle into `dist/web/`, emptied and rewritten whole; the programs Berth starts are
 * bundled last with the dependencies they import (scripts/bundle.mjs, which lists them in `dist/bundled.json`).
 */
export function staleBuildOutputs(root: string): string[] {
  const stale: string[] = [];
  for (const source of filesUnder(root, "src")) {
    // What tsconfig.json compiles: declarations and tests under src/ make no output.
    if (!source.endsWith(".ts") || source.endsWith(".d.ts") || source.endsWith(".test.ts")) continue;
    const output = `dist/${source.slice("src/".length, -".ts".length)}.js`;
    const built = modifiedAt(root, output);
    if (built === undefined) stale.push(`${source} has no ${output}`);
    else if (modifiedAt(root, source)! > built) stale.push(`${source} is newer than ${output}`);
  }
  const bundle = filesUnder(root, "dist/web");
  // The bundle is as old as its oldest file: every file of it is rewritten by each build.
  const bundledAt = bundle.length === 0 ? undefined : Math.min(...bundle.map((file) => modifiedAt(root, file)!));
  for (const source of ["web/index.html", ...filesUnder(root, "web/src"), ...filesUnder(root, "web/public")]) {
    const changed = modifiedAt(root, source);
    if (changed === undefined) continue;
    if (bundledAt === undefined) {
      stale.push("there is no dashboard bundle in dist/web/");
      break;
    }
    if (changed > bundledAt) stale.push(`${source} is newer than the dashboard bundle in dist/web/`);
  }
  stale.push(...staleProgramBundles(root));
  return stale;
}

/** What a program's bundle holds besides its sources: the dependencies installed, and the way it was bundled. */
const BUNDLED_TOO = ["package-lock.json", "node_modules/.package-lock.json", "scripts/bundle.mjs"];

function staleProgramBundles(root: string): string[] {
  if (!existsSync(join(root, "dist/bundled.json"))) return ["the programs in dist/ are not bundled (dist/bundled.json is missing)"];
  const { bundles } = JSON.parse(readFileSync(join(root, "dist/bundled.json"), "utf8")) as { bundles: string[] };
  const stale: string[] = [];
  for (const bundle of bundles) {
    const built = modifiedAt(root, bundle);
    if (built === undefined) {
      stale.push(`${bundle} is missing`);
      continue;
    }
    for (const input of BUNDLED_TOO) if ((modifiedAt(root, input) ?? 0) > built) stale.push(`${input} is newer than ${bundle}`);
  }
  return stale;
}

/** Why a test run refuses to start on a stale build, or undefined when dist/ is current. */
export function staleBuildMessage(root: string): string | undefined {
  const stale = staleBuildOutputs(root);
  if (stale.length === 0) return undefined;
  const shown = stale.slice(0, 5).map((line) => `  ${line}`);
  if (stale.length > shown.length) shown.push(`  and ${stale.length - shown.length} more`);
  return [
    "The tests run the compiled code in dist/, which is older than its sources:",
    ...shown,
    "Run `npm run build` first (`npm test` and `npm run test:quick` build before they test).",
  ].join("\n");
}

/** Files under `dir` (relative to `root`), as paths relative to `root`; none if `dir` does not exist. */
function filesUnder(root: string, dir: string): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

function modifiedAt(root: string, file: string): number | undefined {
  try {
    return statSync(join(root, file)).mtimeMs;
  } catch {
    return undefined;
  }
}
