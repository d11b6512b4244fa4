import { existsSync, readdirSync, readFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative } from "node:path";

/**
 * The rules of ARCHITECTURE.md#the-layers as a checker of a source tree (`src/` and `web/src/` under `root`), so
 * test/architecture.test.ts can run it on the repository and on a copy with a violation planted. Every static,
 * side-effect and dynamic `import()` of a string counts; each violation names the file, the import and the rule.
 */

/** The layers from the bottom up: a layer imports only the layers before it, and its siblings where `siblings`. */
const LAYERS: ReadonlyArray<{ readonly folders: readonly string[]; readonly siblings: boolean }> = [
  { folders: ["lifecycle", "protocol", "version.ts"], siblings: false },
  {
    folders: ["processes", "config", "store", "location", "agents", "logins", "git", "changes", "worktrees", "sandbox"],
    siblings: true,
  },
  { folders: ["host"], siblings: false },
  { folders: ["server"], siblings: false },
  { folders: ["cli"], siblings: false },
];

/** Outside the layers: they may use any of them, and nothing in a layer imports them. */
const OUTSIDE = ["bench", "examples"];

/** The host's API: the only modules of `src/host` the protocol edges (server, cli) and the dashboard's types reach. */
const HOST_API = ["host/host.ts", "host/views.ts", "host/host-errors.ts", "host/logger.ts", "host/agent-catalogue.ts"];

export interface Import {
  /** The importing file, relative to the root (`src/host/host.ts`, `web/src/main.tsx`). */
  readonly file: string;
  /** Its layer: the folder under `src/` (or `version.ts`), or `web`. */
  readonly layer: string;
  /** The imported module relative to `src/` with a `.ts` name (`host/views.ts`), else the package name. */
  readonly target: string;
  readonly internal: boolean;
  readonly typeOnly: boolean;
  readonly dynamic: boolean;
}

const STATIC = /^(import|export)\b([^;]*?)\sfrom\s+"([^"]+)"/gms;
const SIDE_EFFECT = /^import\s+"([^"]+)"/gm;
const DYNAMIC = /\bimport\(\s*"([^"]+)"\s*\)/g;

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Every import of every `.ts`/`.tsx` file of `src/` and `web/src/` under `root`. */
export function importsOf(root: string): Import[] {
  const src = join(root, "src");
  const found: Import[] = [];
  for (const path of [...sourceFiles(src), ...sourceFiles(join(root, "web", "src"))]) {
    const file = relative(root, path);
    const layer = file.startsWith("web/") ? "web" : relative(src, path).split("/")[0]!;
    const text = readFileSync(path, "utf8");
    const add = (spec: string, typeOnly: boolean, dynamic: boolean) => {
      const internal = spec.startsWith(".");
      const resolved = relative(src, join(dirname(path), spec));
      const target = internal ? (resolved.startsWith("..") ? relative(root, join(dirname(path), spec)) : resolved.replace(/\.js$/, ".ts")) : spec;
      found.push({ file, layer, target, internal: internal && !resolved.startsWith(".."), typeOnly, dynamic });
    };
    for (const match of text.matchAll(STATIC)) add(match[3]!, /^\s*type\b/.test(match[2]!), false);
    for (const match of text.matchAll(SIDE_EFFECT)) add(match[1]!, false, false);
    for (const match of text.matchAll(DYNAMIC)) add(match[1]!, false, true);
  }
  return found;
}

const layerOf = (target: string) => target.split("/")[0]!;
const rankOf = (layer: string) => LAYERS.findIndex((l) => l.folders.includes(layer));
const describe = (i: Import, rule: string) =>
  `${i.file} imports ${i.internal ? `src/${i.target}` : i.target}${i.dynamic ? " (dynamic)" : ""}: ${rule}`;

/** Every `src/` folder (or file) is in a layer or named outside them. */
function unplaced(root: string): string[] {
  return readdirSync(join(root, "src"))
    .filter((entry) => rankOf(entry) < 0 && !OUTSIDE.includes(entry))
    .map((entry) => `src/${entry} is in no layer of ARCHITECTURE.md#the-layers`);
}

/** No import reaches a layer above its own, a sibling where siblings may not, or a folder outside the layers. */
function upward(imports: readonly Import[]): string[] {
  return imports.flatMap((i) => {
    const from = rankOf(i.layer);
    if (!i.internal || from < 0) return [];
    const to = layerOf(i.target);
    if (to === i.layer) return [];
    if (OUTSIDE.includes(to)) return [describe(i, `src/${to} is outside the layers: nothing in a layer imports it`)];
    const rank = rankOf(to);
    if (rank > from) return [describe(i, `src/${to} is a layer above src/${i.layer}`)];
    if (rank === from && !LAYERS[from]!.siblings) return [describe(i, `src/${to} is a sibling src/${i.layer} may not import`)];
    return [];
  });
}

/** The kernel does no I/O. */
function kernelIo(imports: readonly Import[]): string[] {
  return imports
    .filter((i) => i.layer === "lifecycle" && /^node:(fs|child_process|net|http|worker_threads)/.test(i.target))
    .map((i) => describe(i, "the lifecycle kernel does no I/O"));
}

/** git imports only the process runner below it. */
function gitRunner(imports: readonly Import[]): string[] {
  return imports
    .filter((i) => i.layer === "git" && i.internal && !["git", "processes"].includes(layerOf(i.target)))
    .map((i) => describe(i, "src/git imports only src/processes"));
}

/** The protocol edges reach the host only through its API. */
function hostApiOnly(imports: readonly Import[]): string[] {
  return imports
    .filter((i) => ["server", "cli"].includes(i.layer) && i.internal && layerOf(i.target) === "host" && !HOST_API.includes(i.target))
    .map((i) => describe(i, "the protocol edges reach the host only through its API"));
}

/**
 * Node's globals a browser lacks, used in code (comments and strings taken out first). The dashboard's typecheck cannot
 * catch them: its types reach the host's API, which brings Node's types along.
 */
const NODE_GLOBALS = /\b(Buffer|process|__dirname|__filename|require)\s*[.(]/;

function usesNodeGlobals(root: string, target: string): boolean {
  const code = readFileSync(join(root, "src", target), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "")
    .replace(/(["'`])(?:\\.|(?!\1)[^\\\n])*\1/g, '""');
  return NODE_GLOBALS.test(code);
}

/** A module of `src/` and what it imports of `src/`, transitively, use nothing Node has built in: no import, no global. */
function nodeFree(root: string, imports: readonly Import[], target: string, seen = new Set<string>()): boolean {
  if (seen.has(target)) return true;
  seen.add(target);
  if (usesNodeGlobals(root, target)) return false;
  const own = imports.filter((i) => i.file === `src/${target}`);
  return own.every((i) => (i.internal ? nodeFree(root, imports, i.target, seen) : !isBuiltin(i.target)));
}

/**
 * The dashboard is a browser bundle: of `src/` it imports values only from `src/protocol/` modules free of Node
 * imports, and types only from the host's API and `src/protocol/`.
 */
function dashboard(root: string, imports: readonly Import[]): string[] {
  return imports.flatMap((i) => {
    if (i.layer !== "web" || !i.internal) return [];
    const inProtocol = layerOf(i.target) === "protocol";
    if (i.typeOnly)
      return inProtocol || HOST_API.includes(i.target) ? [] : [describe(i, "web/ imports types only from the host's API and src/protocol")];
    if (!inProtocol) return [describe(i, "web/ imports values only from src/protocol")];
    return nodeFree(root, imports, i.target) ? [] : [describe(i, "web/ imports only src/protocol modules free of Node imports and globals")];
  });
}

/** Every violation of the layers' rules in the tree under `root`; empty when it keeps them all. */
export function violations(root: string): string[] {
  const imports = importsOf(root);
  return [...unplaced(root), ...upward(imports), ...kernelIo(imports), ...gitRunner(imports), ...hostApiOnly(imports), ...dashboard(root, imports)];
}
