import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentFacts,
  DirectAgent,
  errorShape,
  modelIds,
  prepareRealAgent,
  realAgentInstalled,
  realAgentNames,
  startRefusingModelEndpoint,
  stopAllDirectAgents,
  type ModelEndpoint,
  type RealAgentEnvironment,
} from "../support/real-agents.js";

/**
 * The direct half of the differential test: each real agent (installed as a dev dependency, run
 * offline) driven over its own stdio by the SDK's client. These are the facts Berth must pass on
 * unchanged; test/real-agents/through-berth.test.ts runs the same script through Berth.
 */

for (const name of realAgentNames) {
  const facts = agentFacts[name];

  const installed = realAgentInstalled(name);
  describe.skipIf(!installed)(`${name}, directly over stdio${installed ? "" : " (skipped: not installed; run npm ci)"}`, () => {
    let endpoint: ModelEndpoint;
    let env: RealAgentEnvironment;
    let agent: DirectAgent;
    let sessionId: string;

    beforeAll(async () => {
      endpoint = await startRefusingModelEndpoint();
      env = await prepareRealAgent(name, { modelUrl: endpoint.url });
      agent = await DirectAgent.start(env);
    });

    afterAll(async () => {
      await stopAllDirectAgents();
      await endpoint?.close();
      env?.cleanup();
    });

    it("initialize: its auth methods, prompt capabilities, and session/load", () => {
      const { agentCapabilities, authMethods } = agent.initializeResponse;
      expect((authMethods ?? []).map((m) => m.id)).toEqual(facts.authMethodIds);
      expect(agentCapabilities?.promptCapabilities).toEqual(facts.promptCapabilities);
      expect(agentCapabilities?.loadSession).toBe(true);
      expect(agentCapabilities?.sessionCapabilities).toMatchObject({ list: {}, resume: {}, close: {} });
    });

    it("session/new: its config options, modes and models (after authenticate where it needs it)", async () => {
      if (facts.newNeedsAuth) {
        const refused = await agent.newSession(env.cwd).catch((error: unknown) => error);
        expect(errorShape(refused)).toMatchObject({ code: -32000 });
        expect(await agent.authenticate(facts.newNeedsAuth)).toEqual({});
      }
      const created = await agent.newSession(env.cwd);
      sessionId = created.sessionId;
      expect(created.configOptions?.map((o) => o.id)).toEqual(facts.configOptionIds);
      const option = created.configOptions!.find((o) => o.id === facts.setOption.configId)!;
      expect(option).toMatchObject({ type: "select", currentValue: facts.setOption.default });
      expect(created.modes?.availableModes.map((m) => m.id)).toEqual(facts.modeIds);
      expect(modelIds(created)).toEqual(facts.modelIds);
    });

    it("session/set_config_option: the new value is reported back", async () => {
      const { configId, value } = facts.setOption;
      const response = await agent.setConfigOption(sessionId, configId, value);
      expect(response.configOptions.find((o) => o.id === configId)?.currentValue).toBe(value);
      // An unknown value is refused with the agent's own error.
      const refused = await agent.setConfigOption(sessionId, configId, "no-such-value").catch((error: unknown) => error);
      expect(errorShape(refused).code).toBeTypeOf("number");
    });

    if (name === "claude") {
      it("session/set_mode and session/set_model (it advertises modes and models)", async () => {
        expect(await agent.setMode(sessionId, facts.setOption.value)).toEqual({});
        expect(await agent.setModel(sessionId, "haiku")).toEqual({});
      });
    }

    if (name === "opencode") {
      it("an unknown model is refused with -32602 and data naming it", async () => {
        const refused = await agent.setConfigOption(sessionId, "model", "nope/nope").catch((error: unknown) => error);
        expect(errorShape(refused)).toEqual({ code: -32602, data: { providerId: "nope", modelId: "nope/nope" } });
      });
    }

    it("a prompted session is loaded by a new process of the agent, history replayed", async () => {
      // The loopback model endpoint refuses with a 400: the turn ends in an error at once, but the agent recorded it.
      const turn = await agent.promptSettled(sessionId, "remember the berth");
      expect(turn.ok).toBe(false);
      expect(endpoint.requests.length).toBeGreaterThan(0);
      await agent.stop();

      agent = await DirectAgent.start(env);
      // No `authenticate` needed to load, not even for codex (it asks for it only on session/new).
      const loaded = await agent.loadSession(sessionId, env.cwd);
      expect(agent.userText(sessionId)).toContain("remember the berth");
      expect(loaded.configOptions?.map((o) => o.id)).toEqual(facts.configOptionIds);
      const option = loaded.configOptions!.find((o) => o.id === facts.setOption.configId)!;
      // What a client set is not remembered by the agent across a restart: Berth must re-apply it.
      expect(option.currentValue).toBe(facts.remembersOptionAcrossRestart ? facts.setOption.value : facts.setOption.default);
    });

    if (name !== "opencode") {
      it("a session never prompted cannot be loaded by a new process (-32002)", async () => {
        if (facts.newNeedsAuth) await agent.authenticate(facts.newNeedsAuth);
        const { sessionId: fresh } = await agent.newSession(env.cwd);
        await agent.stop();
        agent = await DirectAgent.start(env);
        const refused = await agent.loadSession(fresh, env.cwd).catch((error: unknown) => error);
        expect(errorShape(refused)).toMatchObject({ code: -32002 });
      });
    }
  });
}
