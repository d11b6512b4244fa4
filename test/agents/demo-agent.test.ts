import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { methods, RequestError, type McpServer, type SessionUpdate } from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentText, chunkText, demoAgentMain, DemoAgentProcess, killGroup, type StartOptions } from "./demo-agent-process.js";
import { processGroupOf, processIsRunning, waitUntilGone } from "../support/process-table.js";

let stateDir: string;
let workDir: string;
const started: DemoAgentProcess[] = [];
/** Processes a test learned about beyond agents and terminals (e.g. orphans). */
const otherPids: number[] = [];

async function start(options: Partial<StartOptions> = {}): Promise<DemoAgentProcess> {
  const { agent } = await DemoAgentProcess.start({ stateDir, ...options });
  started.push(agent);
  return agent;
}

beforeEach(() => {
  stateDir = mkdtempSync(join(tmpdir(), "berth-demo-state-"));
  workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-demo-cwd-")));
});

afterEach(async () => {
  const agents = started.splice(0);
  await Promise.all(agents.map((agent) => agent.stop()));
  const pids = [...agents.flatMap((agent) => [agent.pid, ...agent.terminals.pids]), ...otherPids.splice(0)];
  const leftBehind = await waitUntilGone(pids);
  // Clean up even when failing, so one broken test does not leak into the next.
  for (const pid of leftBehind) process.kill(pid, "SIGKILL");
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
  expect(leftBehind, "processes left behind").toEqual([]);
});

const httpServer: McpServer = {
  type: "http",
  name: "location-services",
  url: "http://127.0.0.1:4555/mcp",
  headers: [{ name: "x-berth-location", value: "abc" }],
};

describe("initialize", () => {
  it("names the agent and advertises load, resume, close, list, fork, HTTP MCP servers, rich prompts, auth and _meta", async () => {
    const { agent, initialized } = await DemoAgentProcess.start({ stateDir });
    started.push(agent);
    expect(initialized.agentInfo?.name).toBe("berth-demo-agent");
    expect(initialized.agentCapabilities).toEqual({
      loadSession: true,
      mcpCapabilities: { http: true },
      promptCapabilities: { image: true, embeddedContext: true },
      sessionCapabilities: { resume: {}, close: {}, list: {}, fork: {} },
      _meta: { "berth-demo/capabilities": true },
    });
    expect(initialized.authMethods).toEqual([
      {
        id: "demo-token",
        name: "Demo token",
        description:
          'Any non-empty _meta["berth-demo/token"] passed to authenticate, else $DEMO_TOKEN or $ACPX_AUTH_DEMO_TOKEN in the agent\'s environment',
      },
      {
        type: "env_var",
        id: "demo-env",
        name: "Demo environment token",
        description: "Requires setting the `BERTH_DEMO_ENV_TOKEN` environment variable.",
        vars: [{ name: "BERTH_DEMO_ENV_TOKEN" }],
      },
    ]);
    expect(initialized._meta).toEqual({ "berth-demo/initialize": true });
  });

  it("with --no-load advertises neither load nor resume, and refuses them", async () => {
    const { agent, initialized } = await DemoAgentProcess.start({ stateDir, args: ["--no-load"] });
    started.push(agent);
    expect(initialized.agentCapabilities?.loadSession).toBe(false);
    expect(initialized.agentCapabilities?.sessionCapabilities?.resume).toBeUndefined();
    const sessionId = await agent.newSession(workDir);
    await expect(agent.agent.request(methods.agent.session.load, { sessionId, cwd: workDir, mcpServers: [] })).rejects.toMatchObject({
      code: -32601,
    });
    await expect(agent.agent.request(methods.agent.session.resume, { sessionId, cwd: workDir })).rejects.toMatchObject({ code: -32601 });
  });

  it("rejects an unknown command-line option with a message naming it", async () => {
    const child = spawn(process.execPath, [demoAgentMain, "--state-dir", stateDir, "--bogus"], {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
    });
    otherPids.push(child.pid!);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const code = await new Promise((resolve) => child.once("close", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("--bogus");
  });
});

describe("prompts", () => {
  it("streams plain text back in several chunks of one message and ends the turn", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const text = "The quick brown fox jumps over the lazy dog";
    const { stopReason, updates } = await agent.prompt(sessionId, text);
    expect(stopReason).toBe("end_turn");
    const chunks = updates.filter((update) => update.sessionUpdate === "agent_message_chunk");
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(agentText(updates)).toBe(text);
    expect(new Set(chunks.map((chunk) => chunk.sessionUpdate === "agent_message_chunk" && chunk.messageId)).size).toBe(1);
  });

  it("answers an unknown command with a message naming it", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const { stopReason, updates } = await agent.prompt(sessionId, "/frobnicate now");
    expect(stopReason).toBe("end_turn");
    expect(agentText(updates)).toMatch(/^Unknown command: \/frobnicate\. Known commands: .*\/run/);
  });

  it("explains a bad argument instead of failing the turn", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const { stopReason, updates } = await agent.prompt(sessionId, "/sleep soon");
    expect(stopReason).toBe("end_turn");
    expect(agentText(updates)).toContain('invalid duration "soon"');
  });

  it("refuses a session whose cwd is not absolute", async () => {
    const agent = await start();
    await expect(agent.newSession("relative/dir")).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('cwd must be an absolute path, got "relative/dir"'),
    });
  });

  it("refuses a prompt for a session it does not know", async () => {
    const agent = await start();
    await expect(agent.prompt("no-such-session", "hello")).rejects.toMatchObject({ code: -32002 });
  });

  it("refuses a second prompt while a turn runs", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const sleeping = agent.prompt(sessionId, "/sleep 1h");
    await agent.waitForUpdate(sessionId, (update) => chunkText(update, "agent_message_chunk") === "Sleeping for 1h.");
    await expect(agent.prompt(sessionId, "hello")).rejects.toThrow(/already running/);
    await agent.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await sleeping).stopReason).toBe("cancelled");
  });
});

describe("/run", () => {
  it("runs the command in a client terminal at the session's cwd and reports its output", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const { stopReason, updates } = await agent.prompt(sessionId, "/run pwd; echo hello");
    expect(stopReason).toBe("end_turn");
    expect(agent.terminals.created).toEqual([{ sessionId, command: "/bin/sh", args: ["-c", "pwd; echo hello"], cwd: workDir }]);
    const [toolCall, toolCallUpdate] = updates;
    expect(toolCall).toMatchObject({
      sessionUpdate: "tool_call",
      kind: "execute",
      status: "in_progress",
      content: [{ type: "terminal", terminalId: "terminal-1" }],
    });
    expect(toolCallUpdate).toMatchObject({
      sessionUpdate: "tool_call_update",
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: `${workDir}\nhello\n` } }],
    });
    expect(agent.terminals.released).toEqual(["terminal-1"]);
    expect(agent.terminals.liveCount).toBe(0);
  });

  it("marks a command that exits non-zero as failed, with its output", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const { stopReason, updates } = await agent.prompt(sessionId, "/run echo broken >&2; exit 7");
    expect(stopReason).toBe("end_turn");
    expect(updates[1]).toMatchObject({
      sessionUpdate: "tool_call_update",
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: "broken\n" } }],
      rawOutput: { exitCode: 7, signal: null },
    });
    expect(agent.terminals.released).toEqual(["terminal-1"]);
  });

  it("kills the command when the turn is cancelled", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const running = agent.prompt(sessionId, "/run echo started; sleep 3600");
    await agent.waitForUpdate(sessionId, (update) => update.sessionUpdate === "tool_call");
    await agent.agent.notify(methods.agent.session.cancel, { sessionId });
    const { stopReason, updates } = await running;
    expect(stopReason).toBe("cancelled");
    expect(updates[1]).toMatchObject({ sessionUpdate: "tool_call_update", status: "failed" });
    expect(agent.terminals.liveCount).toBe(0);
  });

  it("explains that it cannot run without client terminal support", async () => {
    const agent = await start({ clientCapabilities: {} });
    const sessionId = await agent.newSession(workDir);
    const { updates } = await agent.prompt(sessionId, "/run true");
    expect(agentText(updates)).toContain("did not advertise terminal support");
    expect(agent.terminals.created).toEqual([]);
  });
});

describe("/ask", () => {
  it.each(["allow", "deny"])("reports the chosen option %s", async (optionId) => {
    const agent = await start();
    agent.answers.permission = () => ({ outcome: { outcome: "selected", optionId } });
    const sessionId = await agent.newSession(workDir);
    const { stopReason, updates } = await agent.prompt(sessionId, "/ask May I deploy?");
    expect(stopReason).toBe("end_turn");
    expect(agentText(updates)).toBe(`You chose: ${optionId}`);
    expect(agent.permissionRequests).toHaveLength(1);
    expect(agent.permissionRequests[0]).toMatchObject({
      sessionId,
      toolCall: { title: "May I deploy?" },
      options: [
        { optionId: "allow", kind: "allow_once" },
        { optionId: "deny", kind: "reject_once" },
      ],
    });
  });

  it("ends the turn as cancelled when the question is cancelled", async () => {
    const agent = await start();
    agent.answers.permission = () => ({ outcome: { outcome: "cancelled" } });
    const sessionId = await agent.newSession(workDir);
    const { stopReason, updates } = await agent.prompt(sessionId, "/ask May I deploy?");
    expect(stopReason).toBe("cancelled");
    expect(agentText(updates)).toBe("");
  });
});

describe("/elicit", () => {
  it("asks for a one-field form and reports the action and content", async () => {
    const agent = await start();
    agent.answers.elicitation = () => ({ action: "accept", content: { answer: "42" } });
    const sessionId = await agent.newSession(workDir);
    const { stopReason, updates } = await agent.prompt(sessionId, "/elicit What is the answer?");
    expect(stopReason).toBe("end_turn");
    expect(agent.elicitationRequests).toEqual([
      {
        mode: "form",
        sessionId,
        message: "What is the answer?",
        requestedSchema: {
          type: "object",
          properties: { answer: { type: "string", title: "Answer" } },
          required: ["answer"],
        },
      },
    ]);
    expect(agentText(updates)).toBe('Elicitation action: accept, content: {"answer":"42"}');
  });

  it("reports a declined form", async () => {
    const agent = await start();
    agent.answers.elicitation = () => ({ action: "decline" });
    const sessionId = await agent.newSession(workDir);
    const { updates } = await agent.prompt(sessionId, "/elicit Name?");
    expect(agentText(updates)).toBe("Elicitation action: decline, content: null");
  });

  it("explains that it cannot elicit without client form support", async () => {
    const agent = await start({ clientCapabilities: { terminal: true } });
    const sessionId = await agent.newSession(workDir);
    const { updates } = await agent.prompt(sessionId, "/elicit Name?");
    expect(agentText(updates)).toContain("did not advertise form elicitation");
    expect(agent.elicitationRequests).toEqual([]);
  });
});

describe("/sleep", () => {
  it("waits, then ends the turn", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const { stopReason, updates } = await agent.prompt(sessionId, "/sleep 20ms");
    expect(stopReason).toBe("end_turn");
    expect(agentText(updates)).toBe("Sleeping for 20ms.Slept for 20ms.");
  });

  it("ends as cancelled on session/cancel", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const sleeping = agent.prompt(sessionId, "/sleep 1h");
    await agent.waitForUpdate(sessionId, (update) => chunkText(update, "agent_message_chunk") === "Sleeping for 1h.");
    await agent.agent.notify(methods.agent.session.cancel, { sessionId });
    const { stopReason, updates } = await sleeping;
    expect(stopReason).toBe("cancelled");
    expect(agentText(updates)).toBe("Sleeping for 1h.");
  });

  it("with --ignore-cancel, goes on after session/cancel to the end of its wait", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const sleeping = agent.prompt(sessionId, "/sleep --ignore-cancel 300ms");
    await agent.waitForUpdate(sessionId, (update) => chunkText(update, "agent_message_chunk") === "Sleeping for 300ms.");
    await agent.agent.notify(methods.agent.session.cancel, { sessionId });
    const { stopReason, updates } = await sleeping;
    // The stop reason of a cancelled turn is `cancelled` (ACP), however late the agent ends it.
    expect(stopReason).toBe("cancelled");
    expect(agentText(updates)).toBe("Sleeping for 300ms.Slept for 300ms.");
  });

  it("ends as cancelled when the session is closed, which forgets the session", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const sleeping = agent.prompt(sessionId, "/sleep 1h");
    await agent.waitForUpdate(sessionId, (update) => chunkText(update, "agent_message_chunk") === "Sleeping for 1h.");
    await agent.agent.request(methods.agent.session.close, { sessionId });
    expect((await sleeping).stopReason).toBe("cancelled");
    await expect(agent.prompt(sessionId, "hello")).rejects.toMatchObject({ code: -32002 });
  });
});

describe("/spawn-orphan", () => {
  it("leaves a grandchild in the agent's process group that dies with the group", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const { updates } = await agent.prompt(sessionId, "/spawn-orphan");
    const match = /^orphan pid: (\d+)$/.exec(agentText(updates));
    expect(match).not.toBeNull();
    const orphanPid = Number(match![1]);
    otherPids.push(orphanPid);
    expect(processIsRunning(orphanPid)).toBe(true);
    expect(processGroupOf(orphanPid)).toBe(agent.pid);

    killGroup(agent.pid, "SIGKILL");
    expect(await agent.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(await waitUntilGone([orphanPid])).toEqual([]);
  });
});

describe("/crash", () => {
  it("sends one chunk, then exits with code 3 and the prompt rejects", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const from = agent.updates.length;
    await expect(agent.prompt(sessionId, "/crash")).rejects.toThrow(/connection closed/i);
    expect(await agent.exited).toEqual({ code: 3, signal: null });
    expect(agent.connection.signal.aborted).toBe(true);
    expect(agentText(await agent.updatesSince(from, sessionId))).toBe("Crashing now.");
  });
});

describe("/flood", () => {
  it("sends n chunks of the given size, then ends the turn", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const { stopReason, updates } = await agent.prompt(sessionId, "/flood 200 1000");
    expect(stopReason).toBe("end_turn");
    const texts = updates.map((update) => chunkText(update, "agent_message_chunk"));
    expect(texts).toHaveLength(200);
    for (const text of texts) expect(text).toHaveLength(1000);
  });

  it("rejects sizes out of bounds with a clear message", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const { updates } = await agent.prompt(sessionId, "/flood 0 10");
    expect(agentText(updates)).toContain('/flood: invalid arguments "0 10"');
  });
});

describe("/mcp-servers", () => {
  it("reports the MCP servers of session/new, then of session/load and session/resume", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir, [httpServer]);
    expect(JSON.parse(agentText((await agent.prompt(sessionId, "/mcp-servers")).updates))).toEqual([httpServer]);

    const loaded = { ...httpServer, url: "http://127.0.0.1:4556/mcp" };
    await agent.agent.request(methods.agent.session.load, { sessionId, cwd: workDir, mcpServers: [loaded] });
    expect(JSON.parse(agentText((await agent.prompt(sessionId, "/mcp-servers")).updates))).toEqual([loaded]);

    await agent.agent.request(methods.agent.session.resume, { sessionId, cwd: workDir });
    expect(JSON.parse(agentText((await agent.prompt(sessionId, "/mcp-servers")).updates))).toEqual([]);
  });
});

describe("persistence", () => {
  /** The replayable shape of updates: message ids are random, so they are left out. */
  function transcript(updates: SessionUpdate[]): unknown[] {
    return updates.map((update) => {
      switch (update.sessionUpdate) {
        case "user_message_chunk":
          return ["user", chunkText(update, "user_message_chunk")];
        case "agent_message_chunk":
          return ["agent", chunkText(update, "agent_message_chunk")];
        case "tool_call":
          return ["tool", update.title, update.status, update.content];
        default:
          return [update.sessionUpdate];
      }
    });
  }

  it("replays the conversation on session/load after the agent process restarts", async () => {
    const first = await start();
    first.answers.permission = () => ({ outcome: { outcome: "selected", optionId: "allow" } });
    const sessionId = await first.newSession(workDir);
    await first.prompt(sessionId, "hello there, agent");
    await first.prompt(sessionId, "/run echo from-shell");
    await first.prompt(sessionId, "/ask Proceed?");
    await first.prompt(sessionId, "/flood 3 4");
    await first.stop();

    const second = await start();
    const from = second.updates.length;
    await expect(second.loadSession(sessionId, workDir)).resolves.toMatchObject({
      _meta: { "berth-demo/session": "session/load" },
    });
    expect(transcript(await second.updatesSince(from, sessionId))).toEqual([
      ["user", "hello there, agent"],
      ["agent", "hello there, agent"],
      ["user", "/run echo from-shell"],
      ["tool", "echo from-shell", "completed", [{ type: "content", content: { type: "text", text: "from-shell\n" } }]],
      ["user", "/ask Proceed?"],
      ["agent", "You chose: allow"],
      ["user", "/flood 3 4"],
      ["agent", "aaaa"],
      ["agent", "bbbb"],
      ["agent", "cccc"],
      ["available_commands_update"],
    ]);
    const { stopReason, updates } = await second.prompt(sessionId, "still here?");
    expect(stopReason).toBe("end_turn");
    expect(agentText(updates)).toBe("still here?");
  });

  it("resumes a session after a restart without replaying it", async () => {
    const first = await start();
    const sessionId = await first.newSession(workDir);
    await first.prompt(sessionId, "remember me");
    await first.stop();

    const second = await start();
    const from = second.updates.length;
    await second.agent.request(methods.agent.session.resume, { sessionId, cwd: workDir, mcpServers: [httpServer] });
    expect(await second.updatesSince(from, sessionId)).toEqual([]);
    expect(JSON.parse(agentText((await second.prompt(sessionId, "/mcp-servers")).updates))).toEqual([httpServer]);
  });

  it("keeps the conversation of a session that crashed mid-turn", async () => {
    const first = await start();
    const sessionId = await first.newSession(workDir);
    await expect(first.prompt(sessionId, "/crash")).rejects.toThrow();
    await first.stop();

    const second = await start();
    const from = second.updates.length;
    await second.loadSession(sessionId, workDir);
    expect(transcript(await second.updatesSince(from, sessionId))).toEqual([
      ["user", "/crash"],
      ["agent", "Crashing now."],
      ["available_commands_update"],
    ]);
  });

  it("answers session/load of an unknown session with resource-not-found", async () => {
    const agent = await start();
    const loading = agent.agent.request(methods.agent.session.load, {
      sessionId: "never-created",
      cwd: workDir,
      mcpServers: [],
    });
    await expect(loading).rejects.toBeInstanceOf(RequestError);
    await expect(loading).rejects.toMatchObject({ code: -32002, data: { sessionId: "never-created" } });
  });
});

describe("authentication", () => {
  const token = { "berth-demo/token": "secret" };

  it("is offered but not required by default", async () => {
    const agent = await start();
    await agent.newSession(workDir);
    await expect(agent.agent.request(methods.agent.authenticate, { methodId: "demo-token", _meta: token })).resolves.toEqual({});
  });

  it("with --require-auth refuses session methods with -32000 until authenticate succeeds", async () => {
    const agent = await start({ args: ["--require-auth"] });
    const authRequired = { code: -32000, data: { authMethods: ["demo-token", "demo-env"] } };
    await expect(agent.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] })).rejects.toMatchObject(authRequired);
    await expect(agent.agent.request(methods.agent.session.load, { sessionId: "s", cwd: workDir, mcpServers: [] })).rejects.toMatchObject(
      authRequired,
    );
    await expect(agent.agent.request(methods.agent.session.resume, { sessionId: "s", cwd: workDir })).rejects.toMatchObject(authRequired);

    await expect(agent.agent.request(methods.agent.authenticate, { methodId: "password", _meta: token })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown auth method "password"'),
    });
    await expect(
      agent.agent.request(methods.agent.authenticate, { methodId: "demo-token", _meta: { "berth-demo/token": "" } }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('_meta["berth-demo/token"]') });
    await expect(agent.agent.request(methods.agent.authenticate, { methodId: "demo-token" })).rejects.toMatchObject({
      code: -32602,
    });

    await expect(agent.agent.request(methods.agent.authenticate, { methodId: "demo-token", _meta: token })).resolves.toEqual({});
    const sessionId = await agent.newSession(workDir);
    expect((await agent.prompt(sessionId, "in")).stopReason).toBe("end_turn");
  });

  it("the environment-variable method works when whoever started the agent set the variable", async () => {
    const without = await start({ args: ["--require-auth"] });
    await expect(without.agent.request(methods.agent.authenticate, { methodId: "demo-env" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("BERTH_DEMO_ENV_TOKEN"),
    });
    const withVariable = await start({ args: ["--require-auth"], env: { BERTH_DEMO_ENV_TOKEN: "from-env" } });
    await expect(withVariable.agent.request(methods.agent.authenticate, { methodId: "demo-env" })).resolves.toEqual({});
    expect(await withVariable.newSession(workDir)).toEqual(expect.any(String));
  });

  it("is required with BERTH_DEMO_REQUIRE_AUTH=1 too", async () => {
    const agent = await start({ env: { BERTH_DEMO_REQUIRE_AUTH: "1" } });
    await expect(agent.newSession(workDir)).rejects.toMatchObject({ code: -32000 });
  });

  it("takes the token from its environment when _meta has none, as acpx starts agents", async () => {
    for (const name of ["DEMO_TOKEN", "ACPX_AUTH_DEMO_TOKEN"]) {
      const agent = await start({ args: ["--require-auth"], env: { [name]: "secret" } });
      await expect(agent.agent.request(methods.agent.authenticate, { methodId: "demo-token" })).resolves.toEqual({});
      await agent.newSession(workDir);
    }
    const blank = await start({ args: ["--require-auth"], env: { DEMO_TOKEN: " " } });
    await expect(blank.agent.request(methods.agent.authenticate, { methodId: "demo-token" })).rejects.toMatchObject({ code: -32602 });
  });
});

describe("session state", () => {
  const modes = (currentModeId: string) => ({
    currentModeId,
    availableModes: [
      { id: "ask", name: "Ask" },
      { id: "code", name: "Code" },
    ],
  });
  const models = (currentModelId: string) => ({
    currentModelId,
    availableModels: [
      { modelId: "demo-small", name: "Demo small" },
      { modelId: "demo-large", name: "Demo large" },
    ],
  });
  const configOptions = (verbosity: string) => [
    {
      id: "verbosity",
      name: "Verbosity",
      type: "select",
      currentValue: verbosity,
      options: [
        { value: "terse", name: "Terse" },
        { value: "normal", name: "Normal" },
      ],
    },
  ];

  it("session/new carries the default modes, models, config options and _meta", async () => {
    const agent = await start();
    const response = await agent.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
    expect(response).toEqual({
      sessionId: response.sessionId,
      modes: modes("ask"),
      models: models("demo-small"),
      configOptions: configOptions("normal"),
      _meta: { "berth-demo/session": "session/new" },
    });
  });

  it("announces its prompt commands after session/new", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const update = await agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "available_commands_update");
    const commands = update.sessionUpdate === "available_commands_update" ? update.availableCommands : [];
    expect(commands.map((command) => command.name)).toEqual(
      expect.arrayContaining(["run", "ask", "elicit", "sleep", "crash", "mode", "whoami", "ext", "extnotify", "fail"]),
    );
    expect(commands.find((command) => command.name === "run")).toEqual({
      name: "run",
      description: expect.any(String),
      input: { hint: "[--keep-terminal] <shell command>" },
    });
  });

  it("changes mode, config option and model, tells the client, and keeps them across a restart", async () => {
    const first = await start();
    const sessionId = await first.newSession(workDir);
    const from = first.updates.length;

    await expect(first.agent.request(methods.agent.session.setMode, { sessionId, modeId: "code" })).resolves.toEqual({});
    await expect(first.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "verbosity", value: "terse" })).resolves.toEqual({
      configOptions: configOptions("terse"),
    });
    await expect(first.agent.request("session/set_model", { sessionId, modelId: "demo-large" })).resolves.toEqual({});
    expect(await first.updatesSince(from, sessionId)).toEqual([
      { sessionUpdate: "current_mode_update", currentModeId: "code" },
      { sessionUpdate: "config_option_update", configOptions: configOptions("terse") },
    ]);
    expect(agentText((await first.prompt(sessionId, "/mode")).updates)).toBe("code");

    const changed = { modes: modes("code"), models: models("demo-large"), configOptions: configOptions("terse") };
    await expect(first.agent.request(methods.agent.session.resume, { sessionId, cwd: workDir })).resolves.toEqual({
      ...changed,
      _meta: { "berth-demo/session": "session/resume" },
    });
    await first.stop();

    const second = await start();
    await expect(second.loadSession(sessionId, workDir)).resolves.toEqual({
      ...changed,
      _meta: { "berth-demo/session": "session/load" },
    });
    expect(agentText((await second.prompt(sessionId, "/mode")).updates)).toBe("code");
  });

  it("refuses unknown modes, models and config values with -32602", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    await expect(agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: "yolo" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown mode "yolo"'),
    });
    await expect(agent.agent.request("session/set_model", { sessionId, modelId: "gpt" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown model "gpt"'),
    });
    await expect(
      agent.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "verbosity", value: "loud" }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('invalid value "loud"') });
    await expect(agent.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "colour", value: "red" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown config option "colour"'),
    });
  });
});

describe("prompt responses", () => {
  it("carry deterministic usage and echo the prompt's _meta", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const text = "twelve chars";
    const withMeta = await agent.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
      _meta: { "client/trace": "t-1" },
    });
    expect(withMeta).toEqual({
      stopReason: "end_turn",
      usage: { inputTokens: 3, outputTokens: 3, totalTokens: 6 },
      _meta: { "berth-demo/prompt-meta": { "client/trace": "t-1" } },
    });
    const withoutMeta = await agent.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    expect(withoutMeta).toMatchObject({ _meta: { "berth-demo/prompt-meta": null } });
  });

  it("/whoami reports the client's name and capabilities from initialize", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const reported = JSON.parse(agentText((await agent.prompt(sessionId, "/whoami")).updates));
    expect(reported).toMatchObject({
      name: "berth-demo-agent-test",
      capabilities: { terminal: true, elicitation: { form: {} } },
    });
  });

  it("/fail fails session/prompt with that code, message and data, and the session goes on", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    await expect(agent.prompt(sessionId, "/fail -32042 boom")).rejects.toMatchObject({
      code: -32042,
      message: "boom",
      data: { "berth-demo/reason": "boom" },
    });
    expect((await agent.prompt(sessionId, "still here")).stopReason).toBe("end_turn");
  });
});

describe("extension methods", () => {
  it("answers _berth-demo/echo with its params and unknown _ methods with -32601", async () => {
    const agent = await start();
    await expect(agent.agent.request("_berth-demo/echo", { a: [1, 2] })).resolves.toEqual({ echoed: { a: [1, 2] } });
    await expect(agent.agent.request("_berth-demo/nope", {})).rejects.toMatchObject({ code: -32601 });
  });

  it("/ext sends an extension request to the client and reports its answer or error", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    const unanswered = await agent.prompt(sessionId, '/ext _test/hello {"a":1}');
    expect(agentText(unanswered.updates)).toMatch(/^_test\/hello failed with code -32601: .*Method not found/);

    agent.answers.extension = (method, params) => ({ got: method, params });
    const answered = await agent.prompt(sessionId, '/ext _test/hello {"a":1}');
    expect(agentText(answered.updates)).toBe('_test/hello answered: {"got":"_test/hello","params":{"a":1}}');
  });

  it("/extnotify sends an extension notification to the client", async () => {
    const agent = await start();
    const sessionId = await agent.newSession(workDir);
    await agent.prompt(sessionId, '/extnotify _test/note {"b":2}');
    expect(agent.extensionNotifications).toEqual([{ method: "_test/note", params: { b: 2 } }]);
  });
});

describe("--record", () => {
  interface Recorded {
    pid: number;
    direction: "in" | "out";
    message: { id?: unknown; method?: string; params?: unknown; result?: unknown };
  }

  it("appends every raw message received and sent as one NDJSON line", async () => {
    const recordFile = join(stateDir, "wire.ndjson");
    const agent = await start({ args: ["--record", recordFile] });
    agent.answers.extension = () => ({ ok: true });
    const sessionId = await agent.newSession(workDir);
    await agent.agent.notify("_berth-demo/ping", { n: 1 });
    await agent.prompt(sessionId, "/ext _test/hello {}");

    const lines: Recorded[] = readFileSync(recordFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    const [first, second] = lines;
    // Raw: the SDK's parser would have added `fs` and `auth` defaults to these capabilities.
    // Each line names the agent process that wrote it.
    expect(first).toEqual({
      pid: agent.pid,
      direction: "in",
      message: {
        jsonrpc: "2.0",
        id: expect.anything(),
        method: "initialize",
        params: {
          protocolVersion: expect.any(Number),
          clientCapabilities: { terminal: true, elicitation: { form: {} } },
          clientInfo: { name: "berth-demo-agent-test", version: "0" },
        },
      },
    });
    expect(second).toMatchObject({
      direction: "out",
      message: { id: first!.message.id, result: { _meta: { "berth-demo/initialize": true } } },
    });
    expect(lines.every((line) => line.pid === agent.pid)).toBe(true);
    expect(lines).toContainEqual({ pid: agent.pid, direction: "in", message: { jsonrpc: "2.0", method: "_berth-demo/ping", params: { n: 1 } } });
    const extRequest = lines.find((line) => line.direction === "out" && line.message.method === "_test/hello");
    expect(extRequest).toBeDefined();
    expect(lines).toContainEqual({
      pid: agent.pid,
      direction: "in",
      message: { jsonrpc: "2.0", id: extRequest!.message.id, result: { ok: true } },
    });
    expect(lines.at(-1)).toMatchObject({ direction: "out", message: { result: { stopReason: "end_turn" } } });
  });
});
