import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { AcpTestClient, cleanUp, startFixture } from "../server/server-harness.js";
import { scriptedTurns } from "../support/model-endpoint/script.js";
import { startModelEndpoint, type ModelEndpoint } from "../support/model-endpoint/server.js";
import { claude } from "./whole-turns/agents/claude.js";
import { opencode } from "./whole-turns/agents/opencode.js";

/**
 * Real agents in a `workspace-write` sandbox (docs/sandbox.md), through a real Berth, against the scripted model
 * endpoint. Their state directories must be writable or they cannot run; a write in the session's directory lands,
 * a command writing to the home is refused, and the model is told so in the tool's result.
 */

// Outside /tmp (every sandbox has a private /tmp): a write to the home must be refused, not kept in a private copy.
const root = realpathSync(mkdtempSync("/var/tmp/berth-sandboxed-agent-"));
const savedHome = process.env.HOME;
let endpoint: ModelEndpoint | undefined;

afterEach(async () => {
  await cleanUp();
  await endpoint?.close();
  endpoint = undefined;
  process.env.HOME = savedHome;
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

for (const agent of [opencode, claude]) {
  const available = agent.available();
  describe.skipIf(!available)(`${agent.id} in a workspace-write sandbox${available ? "" : ` (skipped: ${agent.unavailableReason})`}`, () => {
    it("completes a tool turn: its file in the session's directory is written, its write to the home refused and the model told", async () => {
      const home = join(root, agent.id, "home");
      const cwd = join(root, agent.id, "work");
      mkdirSync(home, { recursive: true });
      // The host computes the agent's state directories from its own home: the agent's, here.
      process.env.HOME = home;
      const written = join(cwd, "sandboxed.txt");
      const planted = join(home, "planted.txt");
      endpoint = await startModelEndpoint(
        scriptedTurns([
          { text: "Writing the file.", toolCalls: [agent.writeTool(written, "inside the sandbox\n")] },
          { text: "Writing to the home.", toolCalls: [agent.shellTool(`echo planted > ${planted}`)] },
          { text: "All done." },
        ]),
      );
      const entry = await agent.prepare({ home, cwd, endpointUrl: endpoint.url, askPermission: false });
      // The test's setup moves Claude Code's temporary files from /tmp into the home: they must stay writable.
      const binds = entry.env.CLAUDE_CODE_TMPDIR === undefined ? [] : [entry.env.CLAUDE_CODE_TMPDIR];
      const fixture = await startFixture({ config: { agents: { [agent.id]: { ...entry, sandbox: { binds } } } }, workDir: cwd });
      const client = await AcpTestClient.connect(fixture.acpUrl, { token: fixture.token, agent: agent.id });
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
}
