import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { documentedUrl, recipe } from "../support/doc-recipes.js";
import { scriptedTurns } from "../support/model-endpoint/script.js";
import { startModelEndpoint, type ModelEndpoint } from "../support/model-endpoint/server.js";
import { DirectAgent, prepareRealAgent, realAgentInstalled, stopAllDirectAgents, type RealAgentEnvironment } from "../support/real-agents.js";

/**
 * docs/host.md's recipe for pointing opencode at a local model server, run as written: the
 * documented `opencode.json` (its loopback address replaced by a scripted endpoint's) and the
 * documented Berth agent environment, in a fresh home with none of the offline test setup's
 * opencode variables; opencode completes a turn that runs a command, under the documented model.
 */

let endpoint: ModelEndpoint | undefined;
let env: RealAgentEnvironment | undefined;
afterEach(async () => {
  await stopAllDirectAgents();
  await endpoint?.close();
  env?.cleanup();
  endpoint = undefined;
  env = undefined;
});

describe.skipIf(!realAgentInstalled("opencode"))("docs/host.md: opencode against a local model endpoint", () => {
  it("the documented opencode.json and environment point it at the server, under the documented model name", async () => {
    endpoint = await startModelEndpoint(
      scriptedTurns([
        { text: "Checking.", toolCalls: [{ name: "bash", input: { command: "echo recipe-ok", description: "check" } }] },
        { text: "Works." },
      ]),
    );
    env = await prepareRealAgent("opencode");
    const documented = recipe("opencode opencode.json");
    expect(documented).toMatch(documentedUrl);
    const { model } = JSON.parse(documented) as { model: string };
    writeFileSync(join(env.cwd, "opencode.json"), documented.replace(documentedUrl, endpoint.url));
    const berthConfig = JSON.parse(recipe("opencode berth.json")) as { agents: { opencode: { command: string; env: Record<string, string> } } };
    expect(() => parseConfig(berthConfig)).not.toThrow();
    expect(berthConfig.agents.opencode.command).toBe("opencode");
    // Only the documented variables: none of the offline setup's own.
    for (const name of Object.keys(env.entry.env).filter((key) => key.startsWith("OPENCODE_"))) delete env.entry.env[name];
    Object.assign(env.entry.env, berthConfig.agents.opencode.env);

    const agent = await DirectAgent.start(env);
    const { sessionId } = await agent.newSession(env.cwd);
    const turn = await agent.promptSettled(sessionId, "run the recipe check");

    expect(turn).toMatchObject({ ok: true, value: { stopReason: "end_turn" } });
    // A title request (no tools) and one request per model step, all under the documented model.
    const modelName = model.slice(model.indexOf("/") + 1);
    expect(endpoint.requests.map((r) => [r.path, r.model])).toEqual(endpoint.requests.map(() => ["/v1/chat/completions", modelName]));
    expect(endpoint.requests.filter((r) => !r.hasTools)).toHaveLength(1);
    const steps = endpoint.requests.filter((r) => r.hasTools);
    expect(steps).toHaveLength(2);
    expect(steps[1]!.toolResults.map((r) => r.output)).toEqual(["recipe-ok\n"]);
    expect(endpoint.unrouted).toEqual([]);
  });
});
