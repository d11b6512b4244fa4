// The relay as the client sees it (docs/fleet.md, "Routing"): real `berth serve --store postgres://…` processes on one
// throwaway cluster, sharing one cluster secret. A client's `authenticate` on B reaches the agents of the owner hosts
// it uses through B (an agent that requires a login, the demo agent's `--require-auth`), whether the connection to
// the owner was open before the login or opened after it.
import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { freePort } from "../../src/bench/free-port.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { AcpClient, errorLines, FleetTestBed } from "./fleet-harness.js";

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

/** A fleet host whose demo agent requires `authenticate` (its conversations in a directory of its own). */
async function startHost(storeUrl: string, id: string) {
  const port = await freePort();
  const config = {
    fleet: { heartbeatInterval: "250ms", hostTtl: "2000ms", url: `http://127.0.0.1:${port}`, secret: SECRET },
    agents: { demo: { command: process.execPath, args: [demoAgentMain, "--state-dir", bed.tempDir(`berth-auth-${id}-state-`), "--require-auth"] } },
  };
  return bed.serve(storeUrl, id, bed.tempDir(`berth-auth-${id}-`), config, { port });
}

describe("the relay between the hosts of a fleet, as the client sees it", () => {
  it("logs the owners' agents in as the client logged in on the host it connected to", async () => {
    const storeUrl = await postgres.freshDatabase();
    const workDir = bed.tempDir("berth-auth-work-");
    const b = await startHost(storeUrl, "host-b");
    const c = await startHost(storeUrl, "host-c");
    const d = await startHost(storeUrl, "host-d");
    const newSessionOn = (client: AcpClient, host: string) =>
      outcome(client.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [], _meta: { "berth/host": host } }));

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
