import { methods } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { cleanUp, startFixture, tempDir } from "./server-harness.js";

afterEach(cleanUp);

/** The demo agent wanting `authenticate` before session/new; it has no `logout`. Its state directory is each test's, removed by `cleanUp`. */
const agents = () => ({
  locked: { command: process.execPath, args: [demoAgentMain, "--state-dir", tempDir("berth-locked-agent-"), "--require-auth"] },
});
const login = { methodId: "demo-token", _meta: { "berth-demo/token": "s3cret" } };

describe("an agent's login state, as the host tells it", () => {
  it("unknown, needs-login after session/new was refused with -32000, logged-in once a login is accepted", async () => {
    const fixture = await startFixture({ config: { agents: agents() } });
    const host = fixture.berth.host;
    const client = await fixture.connect({ agent: "locked" });
    expect(host.agentLoginState("locked")).toBe("unknown");
    await expect(client.newSession(fixture.workDir)).rejects.toMatchObject({ code: -32000 });
    expect(host.agentLoginState("locked")).toBe("needs-login");
    await client.agent.request(methods.agent.authenticate, login);
    expect(host.agentLoginState("locked")).toBe("logged-in");
    await client.newSession(fixture.workDir);
    expect(host.agentLoginState("locked")).toBe("logged-in");
    expect(() => host.agentLoginState("nobody")).toThrow(/nobody/);
  });

  it("an agent that refuses logout stays logged in, and the client gets its error unchanged", async () => {
    const fixture = await startFixture({ config: { agents: agents() } });
    const client = await fixture.connect({ agent: "locked" });
    await client.agent.request(methods.agent.authenticate, login);
    await expect(client.agent.request(methods.agent.logout, {})).rejects.toMatchObject({ code: -32601 });
    expect(fixture.berth.host.agentLoginState("locked")).toBe("logged-in");
    // The login is still replayed to a new child.
    await client.newSession(fixture.workDir);
  });
});
