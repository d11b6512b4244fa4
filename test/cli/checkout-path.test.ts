import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const checkout = fileURLToPath(new URL("../../", import.meta.url));
const temp = mkdtempSync(join(tmpdir(), "berth-checkout-path-"));

afterAll(() => rmSync(temp, { recursive: true, force: true }));

// A host started from the copy: the demo agent answers a prompt, and the dashboard's files are found.
const script = `
import { existsSync } from "node:fs";
import { join } from "node:path";
const root = process.argv[1];
const { Host } = await import(new URL("dist/host/host.js", root));
const { parseConfig } = await import(new URL("dist/config/load-config.js", root));
const { demoAgentMain } = await import(new URL("dist/agents/agent-registry.js", root));
const { defaultWebDir } = await import(new URL("dist/server/static-files.js", root));
const host = await Host.start({ config: parseConfig({}), dataDir: process.argv[2] });
try {
  const session = await host.createSession({ cwd: process.argv[3] });
  const { stopReason } = await host.prompt(session.id, [{ type: "text", text: "hello" }]);
  console.log(JSON.stringify({ stopReason, demoAgentMain, agentFound: existsSync(demoAgentMain), webDir: defaultWebDir, webFound: existsSync(join(defaultWebDir, "index.html")) }));
} finally {
  await host.shutdown();
}
`;

describe("a checkout whose path has a space in it", () => {
  it("runs: the demo agent and the dashboard's files are found where they are", async () => {
    const root = join(temp, "my projects", "berth");
    mkdirSync(root, { recursive: true });
    cpSync(join(checkout, "dist"), join(root, "dist"), { recursive: true });
    cpSync(join(checkout, "package.json"), join(root, "package.json"));
    symlinkSync(realpathSync(join(checkout, "node_modules")), join(root, "node_modules"));
    const dataDir = join(temp, "data dir");
    const workDir = join(temp, "work dir");
    mkdirSync(workDir);
    const rootUrl = pathToFileURL(`${root}/`).href;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script, rootUrl, dataDir, workDir]);
    expect(JSON.parse(stdout)).toEqual({
      stopReason: "end_turn",
      demoAgentMain: join(root, "dist/agents/demo-agent/main.js"),
      agentFound: true,
      webDir: join(root, "dist/web/"),
      webFound: true,
    });
  });
});
