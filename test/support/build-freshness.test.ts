import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { staleBuildMessage, staleBuildOutputs } from "./build-freshness.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A checkout's files with their modification times, in seconds since the epoch. */
function checkout(files: Record<string, number>): string {
  const root = mkdtempSync(join(tmpdir(), "berth-build-freshness-"));
  roots.push(root);
  for (const [file, at] of Object.entries(files)) touch(root, file, at);
  return root;
}

function touch(root: string, file: string, at: number): void {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), file === "dist/bundled.json" ? JSON.stringify({ bundles: ["dist/cli/main.js"] }) : "");
  utimesSync(join(root, file), at, at);
}

/** Sources at 1,000, everything the build made at 2,000. */
const built = {
  "src/cli/main.ts": 1_000,
  "src/host/host.ts": 1_000,
  "dist/cli/main.js": 2_000,
  "dist/cli/main.js.map": 2_000,
  "dist/host/host.js": 2_000,
  "web/index.html": 1_000,
  "web/src/main.tsx": 1_000,
  "web/src/styles/app.css": 1_000,
  "web/public/icon.svg": 1_000,
  "dist/web/index.html": 2_000,
  "dist/web/assets/index.js": 2_000,
  "dist/web/icon.svg": 2_000,
  "package-lock.json": 500,
  "node_modules/.package-lock.json": 500,
  "scripts/bundle.mjs": 500,
  "dist/bundled.json": 2_000,
};

describe("a stale dist/ is named before any test runs", () => {
  it("finds nothing when every output is newer than its source", () => {
    expect(staleBuildOutputs(checkout(built))).toEqual([]);
  });

  it("expects no output for what the build does not compile: declarations and tests under src/", () => {
    const root = checkout(built);
    touch(root, "src/types/ambient.d.ts", 3_000);
    touch(root, "src/host/host.test.ts", 3_000);
    expect(staleBuildOutputs(root)).toEqual([]);
  });

  it("names a source edited after the build, and one with no output", () => {
    const root = checkout(built);
    touch(root, "src/host/host.ts", 3_000);
    touch(root, "src/host/new-module.ts", 1_000);
    expect(staleBuildOutputs(root).sort()).toEqual([
      "src/host/host.ts is newer than dist/host/host.js",
      "src/host/new-module.ts has no dist/host/new-module.js",
    ]);
  });

  it("names a dashboard source newer than the oldest file of the bundle, or a missing bundle", () => {
    const root = checkout(built);
    touch(root, "dist/web/assets/index.js", 1_500);
    touch(root, "web/src/styles/app.css", 1_800);
    touch(root, "web/public/icon.svg", 1_200);
    expect(staleBuildOutputs(root)).toEqual(["web/src/styles/app.css is newer than the dashboard bundle in dist/web/"]);
    rmSync(join(root, "dist/web"), { recursive: true });
    expect(staleBuildOutputs(root)).toEqual(["there is no dashboard bundle in dist/web/"]);
  });

  it("names what a program's bundle holds besides its sources when it changed after the build: the dependencies installed, the bundling", () => {
    const root = checkout(built);
    touch(root, "node_modules/.package-lock.json", 3_000);
    touch(root, "scripts/bundle.mjs", 3_000);
    expect(staleBuildOutputs(root)).toEqual([
      "node_modules/.package-lock.json is newer than dist/cli/main.js",
      "scripts/bundle.mjs is newer than dist/cli/main.js",
    ]);
  });

  it("names programs left unbundled: no dist/bundled.json (the bundling failed or was not run), or a bundle it lists gone", () => {
    const root = checkout(built);
    rmSync(join(root, "dist/cli/main.js"));
    expect(staleBuildOutputs(root)).toEqual(["src/cli/main.ts has no dist/cli/main.js", "dist/cli/main.js is missing"]);
    rmSync(join(root, "dist/bundled.json"));
    expect(staleBuildOutputs(root)).toContain("the programs in dist/ are not bundled (dist/bundled.json is missing)");
  });

  it("the message shows the first five, counts the rest and says to build", () => {
    const files: Record<string, number> = { ...built };
    for (let i = 0; i < 7; i++) files[`src/added/module-${i}.ts`] = 1_000;
    const message = staleBuildMessage(checkout(files))!;
    expect(message.split("\n")).toEqual([
      "The tests run the compiled code in dist/, which is older than its sources:",
      ...[0, 1, 2, 3, 4].map((i) => `  src/added/module-${i}.ts has no dist/added/module-${i}.js`),
      "  and 2 more",
      "Run `npm run build` first (`npm test` and `npm run test:quick` build before they test).",
    ]);
    expect(staleBuildMessage(checkout(built))).toBeUndefined();
  });

  it("this checkout, as `npm run build` left it, has an output for every source", () => {
    const root = fileURLToPath(new URL("../../", import.meta.url));
    expect(
      staleBuildOutputs(root).filter(
        (line) => line.includes(" has no ") || line.startsWith("there is no") || line.includes("not bundled") || line.endsWith(" is missing"),
      ),
    ).toEqual([]);
  });
});
