import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { platformKey } from "../../src/agents/catalogue.js";

/**
 * A local ACP Agent Registry with one fixture agent (the demo agent behind a command of its own) in both
 * distributions a registry offers without the network: an npm package packed with `npm pack` (the entry names the
 * tarball by a path relative to the registry file), and a .tar.gz of a binary with its sha256. `broken` is the same
 * archive under a wrong sha256; `snake` is a uvx-only agent. `publish` rewrites it with another version of the fixture.
 */
export function catalogueFixture() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "berth-catalogue-")));
  const registryDir = join(root, "registry");
  const stateDir = join(root, "agent-state");
  mkdirSync(registryDir);
  mkdirSync(stateDir);

  const pkg = join(root, "package");
  mkdirSync(pkg);
  writeFileSync(
    join(pkg, "package.json"),
    JSON.stringify({ name: "fixture-acp-agent", version: "1.0.0", bin: { "fixture-acp-agent": "agent.mjs" } }),
  );
  writeFileSync(join(pkg, "agent.mjs"), `#!/usr/bin/env node\nawait import(${JSON.stringify(new URL(`file://${demoAgentMain}`).href)});\n`, {
    mode: 0o755,
  });
  const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", registryDir, pkg], { encoding: "utf8", env: npmFree() }).trim();

  const binaryTree = join(root, "binary");
  mkdirSync(join(binaryTree, "bin"), { recursive: true });
  const binary = join(binaryTree, "bin", "fixture-agent");
  writeFileSync(binary, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(demoAgentMain)} "$@"\n`);
  chmodSync(binary, 0o755);
  const archive = join(registryDir, "fixture-agent.tar.gz");
  execFileSync("tar", ["-czf", archive, "-C", binaryTree, "bin"]);
  const sha256 = createHash("sha256").update(readFileSync(archive)).digest("hex");

  const args = ["--state-dir", stateDir];
  const binaryEntry = (digest: string) => ({
    [platformKey()]: { archive: "./fixture-agent.tar.gz", cmd: "./bin/fixture-agent", args, sha256: digest },
  });
  const registry = join(registryDir, "registry.json");
  /** The registry with the fixture at `version` (its binary under `digest`): a newer version to upgrade to. */
  const publish = (version: string, digest = sha256) =>
    writeFileSync(
      registry,
      JSON.stringify({
        version: "1.0.0",
        agents: [
          {
            id: "fixture",
            name: "Fixture agent",
            version,
            description: "the demo agent, packaged",
            distribution: { npx: { package: `./${tarball}`, args }, binary: binaryEntry(digest) },
          },
          { id: "broken", name: "Broken checksum", version: "2.0.0", distribution: { binary: binaryEntry("0".repeat(64)) } },
          { id: "snake", name: "uvx only", version: "0.1.0", distribution: { uvx: { package: "snake-acp==0.1.0" } } },
        ],
      }),
    );
  publish("1.0.0");
  return { root, registry, sha256, publish };
}

/** npm's own settings from an npm script running these tests stay out of the fixture's `npm pack`. */
function npmFree(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
}
