import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The layers of ARCHITECTURE.md#the-layers ("keep the direction of the arrows"), checked on every import of
 * `src/`: protocol edges depend on the host, the host on the kernel, never back. A new import
 * that crosses a line fails here with the file and the import named.
 */

const src = fileURLToPath(new URL("../src/", import.meta.url));

/** The host's API: the only modules of `src/host` the protocol edges (server, cli) may import. */
const HOST_API = ["host/host.js", "host/views.js", "host/host-errors.js", "host/logger.js", "host/agent-catalogue.js"];

interface Import {
  readonly file: string;
  readonly layer: string;
  /** The imported module, relative to `src/` (e.g. `host/views.js`), or the package name. */
  readonly target: string;
  readonly internal: boolean;
}

function importsOf(dir: string): Import[] {
  const found: Import[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const path = join(entry.parentPath, entry.name);
    const file = relative(src, path);
    const text = readFileSync(path, "utf8");
    for (const match of text.matchAll(/^(?:import|export)\b[^;]*?\sfrom\s+"([^"]+)"/gms)) {
      const spec = match[1]!;
      const internal = spec.startsWith(".");
      const target = internal ? relative(src, join(entry.parentPath, spec)) : spec;
      found.push({ file, layer: file.split("/")[0]!, target, internal });
    }
  }
  return found;
}

const imports = importsOf(src);
const layerOf = (target: string) => (target.includes("/") ? target.split("/")[0]! : target);
const crossing = (from: string, allowed: (i: Import) => boolean) =>
  imports.filter((i) => i.layer === from && i.internal && layerOf(i.target) !== from && !allowed(i)).map((i) => `${i.file} imports ${i.target}`);

describe("architecture: the direction of the arrows", () => {
  it("reads a realistic number of imports (the check itself works)", () => {
    expect(imports.length).toBeGreaterThan(300);
    expect(imports.some((i) => i.file === "server/acp-agent.ts" && i.target === "host/host-errors.js")).toBe(true);
  });

  it("the lifecycle kernel imports nothing of Berth and does no I/O", () => {
    expect(crossing("lifecycle", () => false)).toEqual([]);
    const io = imports.filter((i) => i.layer === "lifecycle" && !i.internal && /^node:(fs|child_process|net|http|worker_threads)/.test(i.target));
    expect(io.map((i) => `${i.file} imports ${i.target}`)).toEqual([]);
  });

  it("Berth's protocol facts import nothing of Berth", () => {
    expect(crossing("protocol", () => false)).toEqual([]);
  });

  it("the parts below the host never import the host or the edges", () => {
    for (const layer of ["processes", "store", "location", "agents", "config", "logins", "changes", "worktrees", "sandbox"]) {
      expect(crossing(layer, (i) => !["host", "server", "cli"].includes(layerOf(i.target)))).toEqual([]);
    }
  });

  it("the host never imports a protocol edge", () => {
    expect(crossing("host", (i) => !["server", "cli"].includes(layerOf(i.target)))).toEqual([]);
  });

  it("the protocol edges reach the host only through its API", () => {
    const edgeAllowed = (i: Import) => HOST_API.includes(i.target) || ["config", "protocol", "version.ts", "version.js"].includes(layerOf(i.target));
    expect(crossing("server", edgeAllowed)).toEqual([]);
    expect(crossing("cli", (i) => edgeAllowed(i) || layerOf(i.target) === "server")).toEqual([]);
  });
});
