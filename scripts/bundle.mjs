// Bundles each program Berth starts (the `berth` CLI, the journal writer's thread, the demo agent) into one file, in
// place of what tsc wrote there. Node loads ES modules one file at a time: `berth serve` loaded about 400 (97 of them
// zod's, 64 of those its locales) for ~400 ms of CPU; bundled, it starts in about half that, and every CLI call and
// demo agent start with it (docs/benchmarks.md). Run by `npm run build` after tsc, on tsc's output.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));

/** The programs, each bundled over its own entry file (paths under dist/). */
const entries = ["cli/main.js", "store/journal-writer-worker.js", "agents/demo-agent/main.js"];

/**
 * Written last, naming the bundles: the test run's freshness check (test/support/build-freshness.ts) finds them by it,
 * and a second run finds dist/ bundled already (it would bundle its own output again).
 */
const manifest = resolve(dist, "bundled.json");
if (existsSync(manifest)) {
  console.error("scripts/bundle.mjs: dist/ is bundled already; run `npm run build`, which compiles it afresh first");
  process.exit(1);
}

/**
 * Runtime dependencies left in node_modules: better-sqlite3 finds its native addon by its own path, and prom-client is
 * imported only when /metrics is first read. (pino-pretty and uqr are loaded with createRequire, out of esbuild's view.)
 * The rest is bundled; CommonJS packages among it (ws, commander, pino) get the `require` Node gives a module.
 */
const external = ["better-sqlite3", "prom-client"];

/**
 * Each of Berth's modules keeps its own `import.meta.url`, the address tsc gave it under dist/: the paths it finds
 * files by (package.json, dist/web/, the catalogue, the demo agent) stay right inside a bundle at another depth.
 */
function ownModuleUrls(outfile) {
  return {
    name: "own-module-urls",
    setup(builder) {
      builder.onLoad({ filter: /\.js$/ }, async ({ path }) => {
        if (!path.startsWith(dist)) return undefined;
        const contents = await readFile(path, "utf8");
        if (!contents.includes("import.meta.url")) return undefined;
        const address = JSON.stringify(relative(dirname(outfile), path));
        return { contents: contents.replaceAll("import.meta.url", `new URL(${address}, import.meta.url).href`), loader: "js" };
      });
    },
  };
}

for (const entry of entries) {
  const outfile = resolve(dist, entry);
  const result = await build({
    entryPoints: [outfile],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external,
    outfile,
    sourcemap: "linked",
    write: false,
    logLevel: "warning",
    banner: { js: "import { createRequire as berthRequire } from 'node:module'; const require = berthRequire(import.meta.url);" },
    plugins: [ownModuleUrls(outfile)],
  });
  // Written after the build has read every input: the bundle replaces one of them.
  for (const file of result.outputFiles) await writeFile(file.path, file.contents);
}
await writeFile(manifest, `${JSON.stringify({ bundles: entries.map((entry) => `dist/${entry}`) }, null, 2)}\n`);
