import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { runAgentLogin } from "../../src/cli/agent-login-flow.js";
import { cleanUp, startFixture, waitUntil } from "../server/server-harness.js";

const oauthAgent = join(import.meta.dirname, "../server/fixtures/oauth-agent.mjs");

afterEach(cleanUp);

describe("berth login for a method the agent runs itself", () => {
  it("prints the address the agent opened, asks again for a refused paste, and logs in with the callback address", async () => {
    const berth = await startFixture({ config: { agents: { oauth: { command: process.execPath, args: [oauthAgent] } }, defaultAgent: "oauth" } });
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = "";
    output.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
    });
    const running = runAgentLogin({ url: berth.url, token: berth.token }, "oauth", "provider", { input, output });

    await waitUntil(() => /https:\/\/provider\.invalid\/\S+/.test(printed), "the address is printed", 20_000);
    const address = new URL(/https:\/\/provider\.invalid\/\S+/.exec(printed)![0]);
    const callback = new URL(address.searchParams.get("redirect_uri")!);
    callback.searchParams.set("code", "C");
    callback.searchParams.set("state", address.searchParams.get("state")!);
    input.write("http://example.com/callback\n");
    await waitUntil(() => printed.includes("must be on this host's loopback"), "the refusal is printed", 20_000);
    input.write(`${callback.href}\n`);
    await running;
    expect(printed).toContain("Logged in to oauth.");
  });
});
