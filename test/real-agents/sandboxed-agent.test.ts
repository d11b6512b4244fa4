import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { AcpTestClient, cleanUp, startFixture } from "../server/server-harness.js";
import { descendantsOf } from "../support/process-table.js";
import { scriptedTurns } from "../support/model-endpoint/script.js";
import { startModelEndpoint, type ModelEndpoint } from "../support/model-endpoint/server.js";
import { claude } from "./whole-turns/agents/claude.js";
import { codex } from "./whole-turns/agents/codex.js";
import { gemini } from "./whole-turns/agents/gemini.js";
import { opencode } from "./whole-turns/agents/opencode.js";
import type { AgentUnderTest } from "./whole-turns/agent-under-test.js";
import type { AgentEntry } from "../support/real-agents.js";

/**
 * Real agents in a `workspace-write` sandbox (docs/sandbox.md), through a real Berth, against the scripted model
 * endpoint. Their state directories must be writable or they cannot run; a write in the session's directory lands,
 * a command writing to the home is refused, and the model is told so in the tool's result. Then the agents' own
 * sandboxes (Claude Code's, Codex's) turned on inside Berth's: both nest.
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

for (const agent of [opencode, claude, codex, gemini]) {
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
      // Gemini's write_file cannot create a file through a client's fs/* (gemini.ts, `cannot`): it replaces one.
      if (agent === gemini) {
        mkdirSync(cwd, { recursive: true });
        writeFileSync(written, "");
      }
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

/** The PID namespace a process runs in (`pid:[4026532…]`); undefined once it is gone. */
function pidNamespaceOf(pid: number | "self"): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/** An agent's own sandbox for its shell commands, turned on in the configuration `prepare` wrote. */
interface OwnSandbox {
  readonly agent: AgentUnderTest;
  readonly name: string;
  enable(entry: AgentEntry): void;
}

const ownSandboxes: OwnSandbox[] = [
  {
    agent: claude,
    name: "Claude Code's (settings sandbox.enabled)",
    enable: (entry) => {
      const settingsFile = join(entry.env.CLAUDE_CONFIG_DIR!, "settings.json");
      const settings = JSON.parse(readFileSync(settingsFile, "utf8")) as object;
      // failIfUnavailable: a sandbox Claude cannot start ends the agent, rather than running its commands unsandboxed.
      writeFileSync(settingsFile, JSON.stringify({ ...settings, sandbox: { enabled: true, failIfUnavailable: true } }), { mode: 0o600 });
    },
  },
  {
    agent: codex,
    name: 'Codex\'s (sandbox_mode "workspace-write")',
    enable: (entry) => {
      const configFile = join(entry.env.CODEX_HOME!, "config.toml");
      const config = readFileSync(configFile, "utf8").replace('sandbox_mode = "danger-full-access"', 'sandbox_mode = "workspace-write"');
      writeFileSync(configFile, config, { mode: 0o600 });
    },
  },
];

for (const own of ownSandboxes) {
  const { agent } = own;
  describe.skipIf(!agent.available())(`${own.name} sandbox nested in Berth's`, () => {
    it("its command runs inside both: the session's directory written, a path only Berth allows refused, the home refused", async () => {
      const home = join(root, `${agent.id}-nested`, "home");
      const cwd = join(root, `${agent.id}-nested`, "work");
      // Writable in Berth's sandbox (a bind), not in the agent's: a write there refused shows the agent's sandbox ran.
      const bound = join(root, `${agent.id}-nested`, "bound");
      for (const dir of [home, bound]) mkdirSync(dir, { recursive: true });
      process.env.HOME = home;
      const nested = join(cwd, "nested.txt");
      const boundFile = join(bound, "bound.txt");
      const planted = join(home, "planted.txt");
      const command = `readlink /proc/self/ns/pid; echo nested > ${nested}; echo bound > ${boundFile}; echo planted > ${planted}`;
      endpoint = await startModelEndpoint(scriptedTurns([{ text: "Running it.", toolCalls: [agent.shellTool(command)] }, { text: "All done." }]));
      const entry = await agent.prepare({ home, cwd, endpointUrl: endpoint.url, askPermission: false });
      own.enable(entry);
      const binds = [...(entry.env.CLAUDE_CODE_TMPDIR === undefined ? [] : [entry.env.CLAUDE_CODE_TMPDIR]), bound];
      const fixture = await startFixture({ config: { agents: { [agent.id]: { ...entry, sandbox: { binds } } } }, workDir: cwd });
      const pids: number[] = [];
      fixture.berth.host.onRecord(({ record }) => {
        if (record.kind === "child_acquired") pids.push(record.pid);
      });
      const client = await AcpTestClient.connect(fixture.acpUrl, { token: fixture.token, agent: agent.id });
      const sessionId = await client.newSession(cwd, { "berth/sandbox": { mode: "workspace-write" } });

      const result = await client.prompt(sessionId, "run the command");

      expect(result.stopReason).toBe("end_turn");
      const requests = endpoint.requests.filter((request) => request.hasTools);
      expect(requests).toHaveLength(2);
      const output = requests[1]!.toolResults.at(-1)?.output ?? "";
      // Berth's sandbox: the PID namespace of the agent (bwrap, Berth's child, runs in the host's).
      const berths = new Set(descendantsOf(pids[0]!).map(pidNamespaceOf));
      berths.delete(pidNamespaceOf("self"));
      expect(berths.size).toBe(1);
      const commandNamespace = /pid:\[\d+\]/.exec(output)?.[0];
      expect(commandNamespace, output).toBeDefined();
      // Both run their commands under bubblewrap: a PID namespace inside Berth's.
      expect([pidNamespaceOf("self"), ...berths]).not.toContain(commandNamespace);
      expect(readFileSync(nested, "utf8")).toBe("nested\n");
      expect(existsSync(boundFile)).toBe(false);
      expect(existsSync(planted)).toBe(false);
      expect(output).toContain("Read-only file system");
      expect(endpoint.errors).toEqual([]);
    }, 240_000);
  });
}
