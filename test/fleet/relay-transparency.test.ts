// The relay as the client sees it (docs/fleet.md, "Routing"): real `berth serve --store postgres://…` processes on one
// throwaway cluster, sharing one cluster secret. The same requests for A's session, from a client of A and from a
// client of B (relayed), get the same answers and errors: code, message, `data` and `_meta` untouched. A client's
// `authenticate` on B reaches the agents of the owner hosts it uses through B (an agent that requires a login, the
// demo agent's `--require-auth`), whether the connection to the owner was open before the login or opened after it.
import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { AcpClient, errorLines, eventually, FleetTestBed, getJson } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
afterEach(() => bed.cleanup());

const SECRET = "relay-test-secret-0123456789abcdef";
const LOGIN = { methodId: "demo-token", _meta: { "berth-demo/token": "s3cret" } };

/** What a request ended with: "ok", or its error's code and message. */
const outcome = (request: Promise<unknown>) =>
  request.then(
    () => "ok",
    (error: { code: number; message: string }) => `${error.code} ${error.message}`,
  );

/** What a request ended with, in full: its result, or its error's code, message and data. */
const settled = (request: Promise<unknown>) =>
  request.then(
    (result) => ({ result }),
    (error: { code: number; message: string; data?: unknown }) => ({ code: error.code, message: error.message, data: error.data }),
  );

/** A fleet host with the demo agent (its conversations in a directory of its own), requiring `authenticate` if asked. */
async function startHost(storeUrl: string, id: string, { requireAuth = false } = {}) {
  const args = [demoAgentMain, "--state-dir", bed.tempDir(`berth-auth-${id}-state-`), ...(requireAuth ? ["--require-auth"] : [])];
  const config = {
    fleet: { heartbeatInterval: "250ms", hostTtl: "6s", secret: SECRET },
    agents: { demo: { command: process.execPath, args } },
  };
  return bed.serve(storeUrl, id, bed.tempDir(`berth-auth-${id}-`), config);
}

describe("the relay between the hosts of a fleet, as the client sees it", () => {
  it("answers the same requests for A's session alike, directly on A and relayed through B: results and errors untouched", async () => {
    const storeUrl = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-relay-same-work-");
    const a = await startHost(storeUrl, "host-a");
    const b = await startHost(storeUrl, "host-b");
    const first = new AcpClient(a.acpUrl, a.token);
    await first.initialize();
    const sessionId = await first.newSession(workDir);
    first.close();
    await eventually(async () => (await getJson(b.url, b.token, `/api/sessions/${sessionId}`)).status === 200, "B lists A's session");

    /** One client's requests, in order: not opened yet, opened, an unknown method, a bad mode, a relative directory, closed. */
    const exchange = async (client: AcpClient) => {
      await client.initialize();
      const answers: unknown[] = [];
      answers.push(await settled(client.prompt(sessionId, "not opened")));
      answers.push(await settled(client.agent.request(methods.agent.session.resume, { sessionId, cwd: workDir, mcpServers: [] })));
      answers.push(await settled(client.agent.request("_demo/unknown", { sessionId })));
      answers.push(await settled(client.agent.request(methods.agent.session.setMode, { sessionId, modeId: "no-such-mode" })));
      answers.push(await settled(client.agent.request(methods.agent.session.resume, { sessionId, cwd: "relative/dir", mcpServers: [] })));
      answers.push(await settled(client.agent.request(methods.agent.session.close, { sessionId })));
      client.close();
      return answers;
    };
    const direct = await exchange(new AcpClient(a.acpUrl, a.token));
    const relayed = await exchange(new AcpClient(b.acpUrl, b.token));
    // Each kind of answer is there (so the comparison compares something), and the relayed ones are the same.
    expect(direct.map((answer) => ("result" in (answer as object) ? "result" : (answer as { code: number }).code))).toEqual([
      -32600,
      "result",
      -32601,
      -32602,
      -32602,
      "result",
    ]);
    expect(direct[1]).toMatchObject({ result: { _meta: expect.any(Object) } });
    expect(relayed).toEqual(direct);
    for (const host of [a, b]) expect(errorLines(host.server)).toEqual([]);
  }, 90_000);

  it("logs the owners' agents in as the client logged in on the host it connected to", async () => {
    const storeUrl = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-auth-work-");
    const b = await startHost(storeUrl, "host-b", { requireAuth: true });
    const c = await startHost(storeUrl, "host-c", { requireAuth: true });
    const d = await startHost(storeUrl, "host-d", { requireAuth: true });
    const newSessionOn = (client: AcpClient, host: string) =>
      outcome(client.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [], _meta: { "berth/placement": host } }));

    const onB = new AcpClient(b.acpUrl, b.token);
    await onB.initialize();
    // Before the login D's agent refuses, with its own error: the connection to D is open from now on.
    expect(await newSessionOn(onB, "host-d")).toMatch(/^-32000 Authentication required/);
    await onB.agent.request(methods.agent.authenticate, LOGIN);
    // C's connection opens after the login; D's was open before it.
    expect(await newSessionOn(onB, "host-c")).toBe("ok");
    expect(await newSessionOn(onB, "host-d")).toBe("ok");
    expect(await newSessionOn(onB, "host-b")).toBe("ok");
    onB.close();
    for (const host of [b, c, d]) expect(errorLines(host.server)).toEqual([]);
  }, 90_000);
});
