import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importsOf, violations } from "./support/import-rules.js";

/**
 * The layers of ARCHITECTURE.md#the-layers ("keep the direction of the arrows"), checked on every import of
 * `src/` and `web/src/` (static, side-effect and dynamic `import()`): every `src/` folder is placed, no import
 * reaches up, the edges reach the host only through its API, the dashboard imports only what a browser can run.
 * A new import that crosses a line fails here with the file, the import and the rule named. Each rule is shown
 * to catch a violation planted in a temporary copy of the tree.
 */

const root = fileURLToPath(new URL("../", import.meta.url));

describe("architecture: the direction of the arrows", () => {
  it("reads a realistic number of imports of every kind (the check itself works)", () => {
    const imports = importsOf(root);
    expect(imports.length).toBeGreaterThan(300);
    expect(imports).toContainEqual(expect.objectContaining({ file: "src/server/acp-agent.ts", target: "host/host-errors.ts", internal: true }));
    expect(imports).toContainEqual(expect.objectContaining({ file: "src/cli/commands/serve.ts", target: "server/serve.ts", dynamic: true }));
    expect(imports).toContainEqual(expect.objectContaining({ file: "web/src/api/types.ts", target: "host/views.ts", typeOnly: true }));
    expect(imports).toContainEqual(expect.objectContaining({ file: "web/src/chat/transcript.ts", target: "protocol/meta-keys.ts", typeOnly: false }));
  });

  it("the repository keeps every rule", () => {
    expect(violations(root)).toEqual([]);
  });
});

describe("architecture: each rule catches a violation planted in a copy of the tree", () => {
  let copy: string;
  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), "berth-architecture-"));
    cpSync(join(root, "src"), join(copy, "src"), { recursive: true });
    cpSync(join(root, "web", "src"), join(copy, "web", "src"), { recursive: true });
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  /** The violations of the copy with these files added (path → text); the files, and folders made for them, are removed again. */
  function withPlanted(files: Record<string, string>): string[] {
    const made: string[] = [];
    try {
      for (const [path, text] of Object.entries(files)) {
        const folder = dirname(join(copy, path));
        const first = mkdirSync(folder, { recursive: true });
        made.push(first ?? join(copy, path));
        writeFileSync(join(copy, path), text);
      }
      return violations(copy);
    } finally {
      for (const path of made) rmSync(path, { recursive: true, force: true });
    }
  }

  it("the copy keeps every rule before anything is planted", () => {
    expect(violations(copy)).toEqual([]);
  });

  it("every src/ folder is placed in a layer", () => {
    expect(withPlanted({ "src/widgets/widget.ts": "export const widget = 1;\n" })).toEqual([
      "src/widgets is in no layer of ARCHITECTURE.md#the-layers",
    ]);
  });

  it("no import reaches a layer above its own", () => {
    expect(withPlanted({ "src/store/planted.ts": 'import { Host } from "../host/host.js";\nexport const planted = Host;\n' })).toEqual([
      "src/store/planted.ts imports src/host/host.ts: src/host is a layer above src/store",
    ]);
    expect(withPlanted({ "src/server/planted.ts": 'export { main } from "../cli/main.js";\n' })).toEqual([
      "src/server/planted.ts imports src/cli/main.ts: src/cli is a layer above src/server",
    ]);
  });

  it("the kernel and the protocol facts import nothing of Berth, not even each other", () => {
    expect(withPlanted({ "src/protocol/planted.ts": 'import type { Clock } from "../lifecycle/clock.js";\nexport type Planted = Clock;\n' })).toEqual(
      ["src/protocol/planted.ts imports src/lifecycle/clock.ts: src/lifecycle is a sibling src/protocol may not import"],
    );
  });

  it("a dynamic import() counts as any other", () => {
    expect(withPlanted({ "src/lifecycle/planted.ts": 'export const load = () => import("../server/serve.js");\n' })).toEqual([
      "src/lifecycle/planted.ts imports src/server/serve.ts (dynamic): src/server is a layer above src/lifecycle",
    ]);
  });

  it("the kernel does no I/O", () => {
    expect(withPlanted({ "src/lifecycle/planted.ts": 'import { readFileSync } from "node:fs";\nexport const read = readFileSync;\n' })).toEqual([
      "src/lifecycle/planted.ts imports node:fs: the lifecycle kernel does no I/O",
    ]);
  });

  it("git imports only the process runner below it", () => {
    expect(withPlanted({ "src/git/planted.ts": 'import "../store/store.js";\n' })).toEqual([
      "src/git/planted.ts imports src/store/store.ts: src/git imports only src/processes",
    ]);
  });

  it("the protocol edges reach the host only through its API", () => {
    expect(withPlanted({ "src/server/planted.ts": 'import type { Journal } from "../host/journal.js";\nexport type Planted = Journal;\n' })).toEqual([
      "src/server/planted.ts imports src/host/journal.ts: the protocol edges reach the host only through its API",
    ]);
  });

  it("nothing in a layer imports the benchmarks or the examples", () => {
    expect(withPlanted({ "src/host/planted.ts": 'export const bench = () => import("../bench/run-all.js");\n' })).toEqual([
      "src/host/planted.ts imports src/bench/run-all.ts (dynamic): src/bench is outside the layers: nothing in a layer imports it",
    ]);
  });

  it("the dashboard imports types only from the host's API and src/protocol, values only from src/protocol, and nothing of Node", () => {
    expect(
      withPlanted({ "web/src/planted.ts": 'import type { Journal } from "../../src/host/journal.js";\nexport type Planted = Journal;\n' }),
    ).toEqual(["web/src/planted.ts imports src/host/journal.ts: web/ imports types only from the host's API and src/protocol"]);
    expect(withPlanted({ "web/src/planted.ts": 'export { berthVersion } from "../../src/version.js";\n' })).toEqual([
      "web/src/planted.ts imports src/version.ts: web/ imports values only from src/protocol",
    ]);
    expect(
      withPlanted({
        "src/protocol/planted-node.ts": 'import { homedir } from "node:os";\nexport const home = homedir;\n',
        "src/protocol/planted-uses-node.ts": 'export { home } from "./planted-node.js";\n',
        "web/src/planted.ts": 'export { home } from "../../src/protocol/planted-uses-node.js";\n',
      }),
    ).toEqual([
      "web/src/planted.ts imports src/protocol/planted-uses-node.ts: web/ imports only src/protocol modules free of Node imports and globals",
    ]);
    // A global of Node's, used in code, counts as much as an import; named in a comment or a string, it does not.
    expect(
      withPlanted({
        "src/protocol/planted-global.ts": "// Buffer.from is Node's.\nexport const size = (t: string) => Buffer.byteLength(t);\n",
        "web/src/planted.ts": 'export { size } from "../../src/protocol/planted-global.js";\n',
      }),
    ).toEqual(["web/src/planted.ts imports src/protocol/planted-global.ts: web/ imports only src/protocol modules free of Node imports and globals"]);
    expect(
      withPlanted({
        "src/protocol/planted-words.ts": '// the agent process.\nexport const words = "process.env and Buffer.from are named here only";\n',
        "web/src/planted.ts": 'export { words } from "../../src/protocol/planted-words.js";\n',
      }),
    ).toEqual([]);
  });
});
