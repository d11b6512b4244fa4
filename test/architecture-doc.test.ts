import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * ARCHITECTURE.md cannot drift from the code: every path it names exists, every `src/` folder has
 * its paragraph, every test it names as a rule's proof exists and has the test it quotes, and
 * every rule or section the code and docs cite is defined there.
 */

const root = fileURLToPath(new URL("../", import.meta.url));
const doc = readFileSync(join(root, "ARCHITECTURE.md"), "utf8");

/** The text of the `## ` section with this title, up to the next `## `. */
function section(title: string): string {
  const start = doc.indexOf(`\n## ${title}\n`);
  expect(start, `ARCHITECTURE.md has no section "## ${title}"`).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** Repository paths named in backticks: `src/…`, `test/…`, `web/…`, `docs/…`. */
function pathsIn(text: string): string[] {
  return [...text.matchAll(/`((?:src|test|web|docs)\/[^`\s]*)`/g)].map((match) => match[1]!);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slugOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

const anchors = new Set([
  ...[...doc.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slugOf(match[1]!)),
  ...[...doc.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]!),
]);

interface Rule {
  readonly name: string;
  readonly anchor: string;
  readonly proof: string;
}

/** The rows of the rules' tables: `| <a id="l3"></a>L3 | says | lives in | proven by |`. */
const rules: Rule[] = [...section("The rules").matchAll(/^\| <a id="([^"]+)"><\/a>([A-Z]\d+) \|(.*)\|$/gm)].map((match) => ({
  anchor: match[1]!,
  name: match[2]!,
  proof: match[3]!.split(" | ").at(-1)!,
}));
const ruleNames = new Set(rules.map((rule) => rule.name));

/** The files Berth's code, tests and docs are in (not node_modules, not the build). */
function sourceFiles(): string[] {
  const dirs = ["src", "test", "web/src", "docs"].map((dir) => join(root, dir));
  const files = dirs.flatMap((dir) =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && /\.(ts|tsx|mjs|md|css)$/.test(entry.name))
      .map((entry) => join(entry.parentPath, entry.name)),
  );
  return [...files, join(root, "README.md")];
}

describe("ARCHITECTURE.md", () => {
  it("names only paths that exist", () => {
    const named = pathsIn(doc);
    expect(named.length).toBeGreaterThan(100);
    expect(named.filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });

  it("gives every folder of src/, and web/, its paragraph in the layers", () => {
    const layers = new Set(pathsIn(section("The layers")));
    const folders = readdirSync(join(root, "src"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/${entry.name}/`);
    expect(folders.length).toBeGreaterThan(10);
    expect([...folders, "web/"].filter((folder) => !layers.has(folder))).toEqual([]);
  });

  it("walks both data paths through files that exist", () => {
    const paths = section("The two data paths");
    for (const hop of ["src/agents/session-update-fast-path.ts", "src/store/postgres/fleet-writer.ts", "src/server/acp-endpoint.ts"]) {
      expect(pathsIn(paths)).toContain(hop);
    }
  });

  it("names each rule once, by its anchor", () => {
    expect(rules.length).toBeGreaterThanOrEqual(30);
    expect(rules.filter((rule) => rule.anchor !== rule.name.toLowerCase()).map((rule) => rule.name)).toEqual([]);
    expect(ruleNames.size).toBe(rules.length);
    // The kernel's rules keep docs/lifecycle.md's numbers.
    for (const name of ["L1", "L3", "L4", "L9", "L10", "H1", "H8"]) expect(ruleNames).toContain(name);
  });

  it("proves every rule with tests that exist and have the test it quotes", () => {
    const missing: string[] = [];
    for (const rule of rules) {
      let file: string | undefined;
      let tests = 0;
      for (const [, path, quoted] of rule.proof.matchAll(/`([^`]+)`|"([^"]+)"/g)) {
        if (path !== undefined) {
          if (path.startsWith("test/")) file = path;
          continue;
        }
        if (file === undefined || !existsSync(join(root, file))) {
          missing.push(`${rule.name}: "${quoted}" names no test file that exists`);
          continue;
        }
        tests++;
        // `…` stands for a part left out (a parameter, the rest of a long name): the other parts must be there, in order.
        const text = readFileSync(join(root, file), "utf8");
        let from = 0;
        for (const part of quoted!.split("…").filter(Boolean)) {
          const at = text.indexOf(part, from);
          if (at < 0) {
            missing.push(`${rule.name}: ${file} has no test "${quoted}"`);
            break;
          }
          from = at + part.length;
        }
      }
      if (tests === 0) missing.push(`${rule.name}: no test named as its proof`);
    }
    expect(missing).toEqual([]);
  });

  it("defines every rule and section the code, tests and docs cite", () => {
    const undefinedCitations: string[] = [];
    for (const file of sourceFiles()) {
      const text = readFileSync(file, "utf8");
      const where = relative(root, file);
      for (const [, anchor] of text.matchAll(/ARCHITECTURE\.md#([\w-]+)/g)) {
        if (!anchors.has(anchor!)) undefinedCitations.push(`${where} cites ARCHITECTURE.md#${anchor}`);
      }
      if (where === "test/architecture-doc.test.ts") continue;
      for (const [name] of text.matchAll(/\b[LHFCPR]\d{1,2}\b/g)) {
        if (!ruleNames.has(name)) undefinedCitations.push(`${where} names rule ${name}`);
      }
    }
    expect(undefinedCitations).toEqual([]);
  });
});
