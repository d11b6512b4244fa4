import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * A doc's module table (`| module | one job |`) is the map of a source folder: it names every
 * module of the folder, and only modules that exist, so a file added, renamed or removed without
 * its row fails here. A name is relative to the folder; `*` stands for any part of one file name.
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

/** The source files of a folder and its subfolders, relative to it. */
function modulesIn(folder: string): string[] {
  const dir = join(root, folder);
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|tsx|css)$/.test(entry.name))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** The modules a name stands for. */
function matching(name: string, modules: readonly string[]): string[] {
  const pattern = new RegExp(`^${name.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`);
  return modules.filter((module) => pattern.test(module));
}

describe.each([
  { doc: "docs/host.md", folder: "src/host" },
  { doc: "docs/lifecycle.md", folder: "src/lifecycle" },
  { doc: "docs/dashboard.md", folder: "web/src" },
])("the module table of $doc", ({ doc, folder }) => {
  it(`names every module of ${folder}/`, () => {
    const modules = modulesIn(folder);
    const named = new Set(modulesNamedIn(doc).flatMap((name) => matching(name, modules)));
    expect(modules.filter((module) => !named.has(module))).toEqual([]);
  });

  it(`names only modules that exist in ${folder}/`, () => {
    const modules = modulesIn(folder);
    const named = modulesNamedIn(doc);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((name) => matching(name, modules).length === 0)).toEqual([]);
  });

  it("names each module once", () => {
    const named = modulesNamedIn(doc);
    expect(named.filter((name, index) => named.indexOf(name) !== index)).toEqual([]);
  });
});
