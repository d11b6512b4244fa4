import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, startFixture, type BerthFixture } from "./server-harness.js";

const oauthAgent = join(import.meta.dirname, "fixtures/oauth-agent.mjs");

interface LoginView {
  id: string;
  state: string;
  address?: string;
  error?: string;
}

afterEach(cleanUp);

function start(opener: "browser" | "xdg-open" | "none" = "browser"): Promise<BerthFixture> {
  return startFixture({
    config: {
      agents: { oauth: { command: process.execPath, args: [oauthAgent, "--opener", opener] } },
      defaultAgent: "oauth",
      rememberLogins: "file",
    },
  });
}

async function post(berth: BerthFixture, path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await berth.api(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The redirect_uri and state the fake provider's address carries, as a real provider would send them back. */
function providerAnswer(address: string, code = "C"): URL {
  const captured = new URL(address);
  const back = new URL(captured.searchParams.get("redirect_uri")!);
  back.searchParams.set("code", code);
  back.searchParams.set("state", captured.searchParams.get("state")!);
  return back;
}

describe("agent login with an OAuth callback on the host", () => {
  it.each(["browser", "xdg-open"] as const)(
    "captures the address the agent opens (%s), delivers the pasted callback and remembers the login",
    async (opener) => {
      const berth = await start(opener);
      const started = await post(berth, "/api/agents/oauth/logins", { methodId: "provider" });
      expect(started.status).toBe(201);
      const login = started.body as unknown as LoginView;
      expect(login.state).toBe("address_captured");
      expect(login.address).toMatch(/^https:\/\/provider\.invalid\/authorize\?redirect_uri=http%3A%2F%2Flocalhost%3A\d+%2Fcallback&state=/);

      const listed = (await (await berth.api("/api/agents/oauth/logins")).json()) as { methods: { id: string; type: string }[]; logins: LoginView[] };
      expect(listed.methods.map((method) => [method.id, method.type])).toEqual([
        ["provider", "agent"],
        ["api-key", "env_var"],
        ["console", "terminal"],
      ]);
      // A terminal method's args: what `berth connect` matches when an editor appends them to it.
      expect(listed.methods.find((method) => method.id === "console")).toEqual({
        id: "console",
        name: "Log in in a terminal",
        type: "terminal",
        args: ["--login"],
      });
      expect(listed.logins).toEqual([expect.objectContaining({ id: login.id, state: "address_captured", address: login.address })]);

      const delivered = await post(berth, `/api/agents/oauth/logins/${login.id}/callback`, { address: providerAnswer(login.address!).href });
      expect(delivered).toEqual({ status: 200, body: expect.objectContaining({ id: login.id, state: "logged_in" }) });
      const remembered = JSON.parse(readFileSync(join(berth.dataDir, "agent-logins.json"), "utf8")) as Record<string, unknown>;
      expect(remembered).toEqual({ oauth: { request: { methodId: "provider" }, env: {} } });
    },
  );

  it("refuses a pasted address on another port, another host or another path, and the login still completes", async () => {
    const berth = await start();
    const login = (await post(berth, "/api/agents/oauth/logins", { methodId: "provider" })).body as unknown as LoginView;
    const good = providerAnswer(login.address!);
    const otherPort = new URL(good);
    otherPort.port = String(Number(good.port) === 65535 ? 1 : Number(good.port) + 1);
    const otherHost = new URL(good);
    otherHost.hostname = "example.com";
    const otherPath = new URL(good);
    otherPath.pathname = "/elsewhere";
    for (const [address, says] of [
      [otherPort.href, "does not match the login's redirect_uri"],
      [otherHost.href, "must be on this host's loopback"],
      [otherPath.href, "does not match the login's redirect_uri"],
      ["not an address", "not an address"],
    ] as const) {
      const refused = await post(berth, `/api/agents/oauth/logins/${login.id}/callback`, { address });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: "callback_refused", message: expect.stringContaining(says) });
    }
    const listed = (await (await berth.api("/api/agents/oauth/logins")).json()) as { logins: LoginView[] };
    expect(listed.logins[0]!.state).toBe("address_captured");
    const delivered = await post(berth, `/api/agents/oauth/logins/${login.id}/callback`, { address: good.href });
    expect(delivered.body.state).toBe("logged_in");
  });

  it("a start's wait for the address ends when its client leaves (the login runs on, listed); a second start of the method answers the same login", async () => {
    // The agent never opens an address nor ends: each start waits on the login until its client leaves.
    const berth = await start("none");
    const { host } = berth.berth;
    const logins = async () => (await host.agentLogins("oauth")).logins;
    const left = new AbortController();
    const first = host.startAgentLogin("oauth", { methodId: "provider" }, left.signal);
    await expect.poll(logins).toEqual([expect.objectContaining({ state: "starting" })]);
    left.abort();
    const view = await first;
    expect(view).toMatchObject({ state: "starting", methodId: "provider" });

    const again = new AbortController();
    const second = host.startAgentLogin("oauth", { methodId: "provider" }, again.signal);
    again.abort();
    expect((await second).id).toBe(view.id);
    expect(await logins()).toEqual([expect.objectContaining({ id: view.id, state: "starting" })]);
  });

  it("reports a login the agent refused, with its reason", async () => {
    const berth = await start();
    const login = (await post(berth, "/api/agents/oauth/logins", { methodId: "provider" })).body as unknown as LoginView;
    const wrongState = providerAnswer(login.address!);
    wrongState.searchParams.set("state", "forged");
    const delivered = await post(berth, `/api/agents/oauth/logins/${login.id}/callback`, { address: wrongState.href });
    expect(delivered.body).toEqual(expect.objectContaining({ state: "failed", error: expect.stringContaining("wrong state") }));
  });

  it("logs in with an environment-variable method's value, which no answer shows", async () => {
    const berth = await start();
    const wrong = await post(berth, "/api/agents/oauth/logins", { methodId: "api-key", env: { FIXTURE_API_KEY: "wrong-key" } });
    expect(wrong.body).toEqual(expect.objectContaining({ state: "failed", error: expect.stringContaining("refused") }));
    const right = await post(berth, "/api/agents/oauth/logins", { methodId: "api-key", env: { FIXTURE_API_KEY: "right-key" } });
    expect(right).toEqual({ status: 201, body: expect.objectContaining({ state: "logged_in" }) });
    const listed = await (await berth.api("/api/agents/oauth/logins")).text();
    expect(listed).not.toContain("right-key");
    expect(JSON.stringify(right.body)).not.toContain("right-key");
    const unknown = await post(berth, "/api/agents/oauth/logins", { methodId: "api-key", env: { OTHER: "x" } });
    expect(unknown).toEqual({ status: 400, body: { error: "invalid_login", message: expect.stringContaining('takes no variable "OTHER"') } });
    const noMethod = await post(berth, "/api/agents/oauth/logins", { methodId: "nope" });
    expect(noMethod).toEqual({ status: 400, body: { error: "invalid_login", message: expect.stringContaining('no auth method "nope"') } });
    // A terminal method runs in a pseudo-terminal, never through `authenticate` (ACP forbids it).
    const terminal = await post(berth, "/api/agents/oauth/logins", { methodId: "console" });
    expect(terminal).toEqual({
      status: 400,
      body: { error: "invalid_login", message: expect.stringContaining("berth login --agent oauth --method console") },
    });
  });
});
