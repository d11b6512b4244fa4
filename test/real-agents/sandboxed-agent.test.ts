import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AcpTestClient, cleanUp, startFixture } from "../server/server-harness.js";
import { scriptedTurns } from "../support/model-endpoint/script.js";
import { startModelEndpoint, type ModelEndpoint } from "../support/model-endpoint/server.js";
import { realAgentInstalled, writeOfflineSetup } from "../support/real-agents.js";
import { opencode } from "./whole-turns/agents/opencode.js";

/**
 * A real agent in a `workspace-write` sandbox (docs/sandbox.md): opencode, through a real Berth, against the
 * scripted model endpoint. Its state directories must be writable or it cannot run; its write in the session's
 * directory lands, its command writing to the home is refused, and the model is told so in the tool's result.
 */

// Outside /tmp (every sandbox has a private /tmp): a write to the home must be refused, not kept in a private copy.
const root = realpathSync(mkdtempSync("/var/tmp/berth-sandboxed-agent-"));
const home = join(root, "home");
const cwd = join(root, "work");
const savedHome = process.env.HOME;
let endpoint: ModelEndpoint | undefined;

beforeAll(() => {
  mkdirSync(home);
  // The host computes the agent's state directories from its own home: the agent's, here.
  process.env.HOME = home;
});

afterAll(async () => {
  await cleanUp();
  await endpoint?.close();
  process.env.HOME = savedHome;
  rmSync(root, { recursive: true, force: true });
});

const installed = realAgentInstalled("opencode");
describe.skipIf(!installed)(`opencode in a workspace-write sandbox${installed ? "" : " (skipped: not installed; run npm ci)"}`, () => {
  it("completes a tool turn: its file in the session's directory is written, its write to the home refused and the model told", async () => {
    const written = join(cwd, "sandboxed.txt");
    const planted = join(home, "planted.txt");
    endpoint = await startModelEndpoint(
      scriptedTurns([
        { text: "Writing the file.", toolCalls: [opencode.writeTool(written, "inside the sandbox\n")] },
        { text: "Writing to the home.", toolCalls: [opencode.shellTool(`echo planted > ${planted}`)] },
        { text: "All done." },
      ]),
    );
    const entry = writeOfflineSetup("opencode", { home, cwd, modelUrl: endpoint.url });
    const fixture = await startFixture({ config: { agents: { opencode: entry } }, workDir: cwd });
    const client = await AcpTestClient.connect(fixture.acpUrl, { token: fixture.token, agent: "opencode" });
    const sessionId = await client.newSession(cwd, { "berth/sandbox": { mode: "workspace-write" } });
    expect(fixture.berth.host.getSession(sessionId)?.sandbox).toMatchObject({ mode: "workspace-write" });

    const result = await client.prompt(sessionId, "write the file, then write to the home");

    expect(result.stopReason).toBe("end_turn");
    expect(readFileSync(written, "utf8")).toBe("inside the sandbox\n");
    expect(existsSync(planted)).toBe(false);
    const requests = endpoint.requests.filter((request) => request.hasTools);
    expect(requests).toHaveLength(3);
    expect(requests[2]!.toolResults.at(-1)?.output).toContain("Read-only file system");
    expect(endpoint.errors).toEqual([]);
    expect(client.texts(sessionId)).toContain("All done.");
  }, 240_000);
});
