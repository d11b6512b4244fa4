import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { documentedUrl, recipe } from "../support/doc-recipes.js";
import { scriptedTurns } from "../support/model-endpoint/script.js";
import { startModelEndpoint, type ModelEndpoint } from "../support/model-endpoint/server.js";
import {
  DirectAgent,
  isolatedEnvironment,
  prepareRealAgent,
  realAgentInstalled,
  stopAllDirectAgents,
  type RealAgentEnvironment,
} from "../support/real-agents.js";
import { gemini, geminiMain } from "./whole-turns/agents/gemini.js";

/**
 * The recipes of docs/host.md for pointing claude-agent-acp and codex-acp at a local model
 * server, run as written: each documented block is read from the page (test/support/doc-recipes.ts),
 * its loopback address replaced by a scripted model endpoint's, and the agent, in a fresh home with
 * nothing else of its offline test setup that the recipe sets, completes a turn that runs a
 * command. So the page cannot drift from what works.
 */

/** The `env` of the documented Berth agent entry, which must be a valid Berth configuration. */
function documentedEnv(name: string, agentId: string): Record<string, string> {
  const config = JSON.parse(recipe(name)) as { agents: Record<string, { env: Record<string, string> }> };
  expect(() => parseConfig(config)).not.toThrow();
  return config.agents[agentId]!.env;
}

let endpoint: ModelEndpoint | undefined;
let env: RealAgentEnvironment | undefined;
let tempRoot: string | undefined;
afterEach(async () => {
  await stopAllDirectAgents();
  await endpoint?.close();
  env?.cleanup();
  if (tempRoot) rmSync(tempRoot, { recursive: true, force: true });
  endpoint = undefined;
  env = undefined;
  tempRoot = undefined;
});

/** A turn that runs a command, then answers. */
async function runTurn(agentEnv: Pick<RealAgentEnvironment, "cwd" | "entry"> & { name: string }) {
  const agent = await DirectAgent.start(agentEnv);
  const { sessionId } = await agent.newSession(agentEnv.cwd);
  const turn = await agent.promptSettled(sessionId, "run the recipe check");
  return { turn, text: agent.updates(sessionId, "agent_message_chunk") };
}

describe.skipIf(!realAgentInstalled("claude"))("docs/host.md: claude-agent-acp against a local model endpoint", () => {
  it("the documented environment points it at the server, under the documented model name", async () => {
    endpoint = await startModelEndpoint(
      scriptedTurns([
        { text: "Checking.", toolCalls: [{ name: "Bash", input: { command: "echo recipe-ok", description: "check" } }] },
        { text: "Works." },
      ]),
    );
    env = await prepareRealAgent("claude");
    const documented = documentedEnv("claude berth.json", "claude");
    expect(documented.ANTHROPIC_BASE_URL).toMatch(documentedUrl);
    env.entry.env.ANTHROPIC_BASE_URL = "";
    env.entry.env.ANTHROPIC_API_KEY = "";
    Object.assign(env.entry.env, documented, { ANTHROPIC_BASE_URL: endpoint.url });

    const { turn } = await runTurn(env);

    expect(turn).toMatchObject({ ok: true, value: { stopReason: "end_turn" } });
    expect(endpoint.requests.map((r) => [r.path, r.model])).toEqual([
      ["/v1/messages?beta=true", documented.ANTHROPIC_DEFAULT_SONNET_MODEL],
      ["/v1/messages?beta=true", documented.ANTHROPIC_DEFAULT_SONNET_MODEL],
    ]);
    expect(endpoint.requests[1]!.toolResults.map((r) => r.output)).toEqual(["recipe-ok"]);
    expect(endpoint.unrouted).toEqual([]);
  });
});

describe.skipIf(!realAgentInstalled("codex"))("docs/host.md: codex-acp against a local model endpoint", () => {
  it("the documented config.toml and environment point it at the server, with no authenticate", async () => {
    endpoint = await startModelEndpoint(
      scriptedTurns([{ text: "Checking.", toolCalls: [{ name: "exec_command", input: { cmd: "echo recipe-ok" } }] }, { text: "Works." }]),
    );
    env = await prepareRealAgent("codex");
    const config = recipe("codex config.toml");
    expect(config).toMatch(documentedUrl);
    const model = /^model = "([^"]+)"$/m.exec(config)![1]!;
    writeFileSync(join(env.entry.env.CODEX_HOME!, "config.toml"), config.replace(documentedUrl, endpoint.url));
    // Only the documented key: the offline setup's OPENAI_API_KEY is not what the recipe uses.
    env.entry.env.OPENAI_API_KEY = "";
    Object.assign(env.entry.env, documentedEnv("codex berth.json", "codex"));

    const { turn, text } = await runTurn(env);

    expect(turn).toMatchObject({ ok: true, value: { stopReason: "end_turn" } });
    expect(endpoint.requests.map((r) => [r.path, r.model])).toEqual([
      ["/v1/responses", model],
      ["/v1/responses", model],
    ]);
    expect(endpoint.requests[1]!.toolResults.at(-1)?.output).toContain("recipe-ok");
    expect(endpoint.unrouted).toEqual([]);
    // The documented warning for a model name codex does not know.
    expect(JSON.stringify(text)).toContain(`Model metadata for \`${model}\` not found`);
  });
});

describe.skipIf(!gemini.available())("docs/host.md: Gemini CLI against a local model endpoint", () => {
  it("the documented settings and environment point it at the server, under the documented model name, and it runs a command unasked", async () => {
    endpoint = await startModelEndpoint(
      scriptedTurns([
        {
          text: "Checking.",
          toolCalls: [{ name: "run_shell_command", input: { command: "echo recipe-ok > recipe.txt && echo recipe-ok", description: "check" } }],
        },
        { text: "Works." },
      ]),
    );
    tempRoot = realpathSync(mkdtempSync(join(tmpdir(), "berth-real-gemini-")));
    const home = join(tempRoot, "home");
    const cwd = join(tempRoot, "work");
    const isolated = isolatedEnvironment(home, cwd);
    mkdirSync(join(home, ".gemini"), { mode: 0o700 });
    writeFileSync(join(home, ".gemini", "settings.json"), recipe("gemini settings.json"));
    const documented = JSON.parse(recipe("gemini berth.json")) as {
      agents: { gemini: { command: string; args: string[]; env: Record<string, string> } };
    };
    const { env: documentedVars, args, command } = documented.agents.gemini;
    expect(command).toBe("gemini");
    expect(documentedVars.GOOGLE_GEMINI_BASE_URL).toMatch(documentedUrl);
    documentedEnv("gemini berth.json", "gemini");
    // `gemini` on the PATH is the package's bundle, run by node here.
    const entry = {
      command: process.execPath,
      args: [geminiMain, ...args],
      env: { ...isolated, ...documentedVars, GOOGLE_GEMINI_BASE_URL: endpoint.url },
    };

    const { turn } = await runTurn({ name: "gemini", cwd, entry });

    expect(turn).toMatchObject({ ok: true, value: { stopReason: "end_turn" } });
    const path = `/v1beta/models/${documentedVars.GEMINI_MODEL}:streamGenerateContent?alt=sse`;
    expect(endpoint.requests.map((r) => r.path)).toEqual([path, path]);
    expect(endpoint.requests[1]!.toolResults.at(-1)?.output).toContain("recipe-ok");
    // The client answers no permission request: the command ran because nothing was asked.
    expect(existsSync(join(cwd, "recipe.txt")) && readFileSync(join(cwd, "recipe.txt"), "utf8")).toBe("recipe-ok\n");
    expect(endpoint.unrouted).toEqual([]);
  });
});
