import type { LoadSessionResponse } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/host/views.js";
import { cleanUp, startFixture, waitUntil, waitUntilGone, type BerthFixture } from "../server/server-harness.js";
import {
  agentFacts,
  connectThroughBerth,
  errorShape,
  modelIds,
  prepareRealAgent,
  realAgentInstalled,
  realAgentNames,
  startRefusingModelEndpoint,
  type ModelEndpoint,
  type RealAgentEnvironment,
  type ScriptClient,
} from "../support/real-agents.js";

/**
 * The through-Berth half of the differential test: the script of direct.test.ts, sent to a real
 * Berth (in-process server on 127.0.0.1) that runs the real agent as its child, over ACP WebSocket
 * on a connection bound to that agent (`/acp?agent=ID`, and `_meta["berth/agent"]` on session/new).
 * What the client sees must be what it sees directly (`agentFacts`, checked by direct.test.ts),
 * plus what Berth adds: the same warm process on re-attach, and a session that outlives the
 * release of its process (authentication and config re-applied to the new child).
 */

const RELEASE_GRACE_MS = 1_000;

for (const name of realAgentNames) {
  const facts = agentFacts[name];
  const prompt = `remember the berth (${name})`;

  const installed = realAgentInstalled(name);
  describe.skipIf(!installed)(`${name}, through Berth${installed ? "" : " (skipped: not installed; run npm ci)"}`, () => {
    let endpoint: ModelEndpoint;
    let env: RealAgentEnvironment;
    let fixture: BerthFixture;
    let sessionId: string;
    let firstPid: number;
    let reattached: LoadSessionResponse;
    let reloaded: LoadSessionResponse;
    const clients: ScriptClient[] = [];

    const connect = async (): Promise<ScriptClient> => {
      const client = connectThroughBerth(fixture.acpUrl, fixture.token, name);
      clients.push(client);
      await client.initialize();
      return client;
    };
    const view = async (): Promise<SessionView> => {
      const response = await fixture.api(`/api/sessions/${sessionId}`);
      expect(response.status).toBe(200);
      return (await response.json()) as SessionView;
    };
    const session = () => fixture.berth.host.getSession(sessionId);

    beforeAll(async () => {
      endpoint = await startRefusingModelEndpoint();
      env = await prepareRealAgent(name, { modelUrl: endpoint.url });
      fixture = await startFixture({
        config: { agents: { [name]: env.entry }, releaseGrace: `${RELEASE_GRACE_MS}ms` },
        workDir: env.cwd,
      });
    });

    afterAll(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
      await cleanUp();
      await endpoint?.close();
      env?.cleanup();
    });

    it("initialize on /acp?agent= shows the agent's own auth methods and prompt capabilities, with Berth's session capabilities", async () => {
      const client = await connect();
      const { agentCapabilities, authMethods } = client.initializeResponse;
      expect((authMethods ?? []).map((m) => m.id)).toEqual(facts.authMethodIds);
      expect(agentCapabilities?.promptCapabilities).toEqual(facts.promptCapabilities);
      expect(agentCapabilities?.loadSession).toBe(true);
      expect(agentCapabilities?.sessionCapabilities).toMatchObject({ list: {}, resume: {}, close: {} });
    });

    it("session/new shows the agent's config options, modes and models (after authenticate where it needs it)", async () => {
      const client = clients[0]!;
      if (facts.newNeedsAuth) {
        const refused = await client.newSession(env.cwd, { "berth/agent": name }).catch((error: unknown) => error);
        // The agent's auth-required error reaches the client as it is, so the client can log in.
        expect(errorShape(refused)).toMatchObject({ code: -32000 });
        expect(await client.authenticate(facts.newNeedsAuth)).toEqual({});
      }
      const created = await client.newSession(env.cwd, { "berth/agent": name });
      sessionId = created.sessionId;
      expect(await view()).toMatchObject({ agent: name, state: "live", holders: 1 });
      expect(created.configOptions?.map((o) => o.id)).toEqual(facts.configOptionIds);
      expect(created.configOptions!.find((o) => o.id === facts.setOption.configId)).toMatchObject({
        type: "select",
        currentValue: facts.setOption.default,
      });
      expect(created.modes?.availableModes.map((m) => m.id)).toEqual(facts.modeIds);
      expect(modelIds(created)).toEqual(facts.modelIds);
    });

    it("a config option set through Berth is reported back; an unknown value is refused with the agent's error", async () => {
      const client = clients[0]!;
      const { configId, value } = facts.setOption;
      const response = await client.setConfigOption(sessionId, configId, value);
      expect(response.configOptions.find((o) => o.id === configId)?.currentValue).toBe(value);
      const refused = await client.setConfigOption(sessionId, configId, "no-such-value").catch((error: unknown) => error);
      expect(errorShape(refused).code).toBeTypeOf("number");
      expect(errorShape(refused).code).not.toBe(-32601);
      if (name === "opencode") {
        const unknownModel = await client.setConfigOption(sessionId, "model", "nope/nope").catch((error: unknown) => error);
        expect(errorShape(unknownModel)).toEqual({ code: -32602, data: { providerId: "nope", modelId: "nope/nope" } });
      }
      if (name === "claude") {
        expect(await client.setMode(sessionId, facts.setOption.value)).toEqual({});
        expect(await client.setModel(sessionId, "haiku")).toEqual({});
      }
    });

    it("a prompt reaches the agent's model endpoint; its error comes back with the agent's code", async () => {
      const client = clients[0]!;
      const before = endpoint.requests.length;
      const turn = await client.promptSettled(sessionId, prompt);
      expect(endpoint.requests.length).toBeGreaterThan(before);
      // Directly, each of the three answers -32603 (with its own data) when the model refuses.
      expect(turn.ok).toBe(false);
      if (!turn.ok) expect(errorShape(turn.error).code).toBe(-32603);
      await waitUntil(() => session()?.turnActive === false, "the turn ended");
    });

    it("re-attaching within the release grace finds the same process, and the history", async () => {
      firstPid = (await view()).pid!;
      expect(firstPid).toBeTypeOf("number");
      await clients[0]!.close();
      await waitUntil(() => session()?.holders === 0, "the hold was released");
      expect(await view()).toMatchObject({ state: "live", pid: firstPid, holders: 0 });

      const again = await connect();
      reattached = await again.loadSession(sessionId, env.cwd);
      expect(await view()).toMatchObject({ state: "live", pid: firstPid, holders: 1, releaseAt: null });
      expect(again.userText(sessionId)).toBe(prompt);
    });

    it("the re-attached session shows the config option as set", () => {
      expect(reattached.configOptions?.find((o) => o.id === facts.setOption.configId)?.currentValue).toBe(facts.setOption.value);
    });

    it("a session reloaded after its process was released runs in a new process, with its history", async () => {
      await clients[1]!.close();
      expect(await waitUntilGone([firstPid], 15_000)).toEqual([]);
      await waitUntil(() => session()?.state === "childless", "the release finished", 15_000);
      expect(await view()).toMatchObject({ state: "childless", pid: null });

      // No `authenticate` on this connection: Berth replays the one it remembered to the new child.
      const later = await connect();
      reloaded = await later.loadSession(sessionId, env.cwd);
      const now = await view();
      expect(now).toMatchObject({ state: "live", holders: 1 });
      expect(now.pid).not.toBe(firstPid);
      expect(later.userText(sessionId)).toBe(prompt);
    });

    it("the reloaded session shows the agent's config options, with the option as set (Berth re-applies it)", () => {
      expect(reloaded.configOptions?.map((o) => o.id)).toEqual(facts.configOptionIds);
      // Whether or not the agent remembers it across a restart (see agentFacts), the client sees what it set.
      expect(reloaded.configOptions?.find((o) => o.id === facts.setOption.configId)?.currentValue).toBe(facts.setOption.value);
    });

    if (facts.newNeedsAuth) {
      it("a new connection opens a new session without authenticating again: Berth replays the remembered method", async () => {
        const fresh = await connect();
        const created = await fresh.newSession(env.cwd, { "berth/agent": name });
        expect(created.configOptions?.map((o) => o.id)).toEqual(facts.configOptionIds);
      });
    }
  });
}
