import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * A doc's module table (`| module | one job |`) is the map of a source folder: it names every
 * module of the folder, and only modules that exist, so a file added, renamed or removed without
 * its row fails here.
 */

const root = fileURLToPath(new URL("../", import.meta.url));

/** The modules a doc's `| module | one job |` table names: the backticked names of its first column. */
function modulesNamedIn(docPath: string): string[] {
  const lines = readFileSync(join(root, docPath), "utf8").split("\n");
  const start = lines.indexOf("| module | one job |");
  expect(start, `${docPath} has no "| module | one job |" table`).toBeGreaterThanOrEqual(0);
  const rows = lines.slice(start + 2);
  const end = rows.findIndex((line) => !line.startsWith("|"));
  return rows.slice(0, end < 0 ? undefined : end).flatMap((row) => [...row.split(" | ")[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

/** The TypeScript modules directly in a folder. */
function modulesIn(folder: string): string[] {
  return readdirSync(join(root, folder)).filter((name) => name.endsWith(".ts"));
}

describe.each([
  { doc: "docs/host.md", folder: "src/host" },
  { doc: "docs/lifecycle.md", folder: "src/lifecycle" },
])("the module table of $doc", ({ doc, folder }) => {
  it(`names every module of ${folder}/`, () => {
    const named = new Set(modulesNamedIn(doc));
    expect(modulesIn(folder).filter((module) => !named.has(module))).toEqual([]);
  });

  it(`names only modules that exist in ${folder}/`, () => {
    const modules = new Set(modulesIn(folder));
    const named = modulesNamedIn(doc);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((module) => !modules.has(module))).toEqual([]);
  });

  it("names each module once", () => {
    const named = modulesNamedIn(doc);
    expect(named.filter((module, index) => named.indexOf(module) !== index)).toEqual([]);
  });
});
