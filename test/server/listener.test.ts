import { Agent, request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, startFixture } from "./server-harness.js";

afterEach(cleanUp);

/** A GET on `agent`: the status it was answered with, or the error that ended it. */
function get(url: string, agent: Agent): Promise<string> {
  return new Promise((resolve) => {
    request(url, { agent }, (response) => {
      response.resume();
      response.on("end", () => resolve(`answered ${response.statusCode}`));
    })
      .on("error", (error: NodeJS.ErrnoException) => resolve(`failed: ${error.code ?? error.message}`))
      .end();
  });
}

describe("the listening socket, bound before the host starts", () => {
  it("hands its connections to the HTTP server, which closes kept-alive ones when Berth stops (a browser's pool must not reach a stopped host)", async () => {
    const fixture = await startFixture();
    const agent = new Agent({ keepAlive: true });
    expect(await get(`${fixture.url}/healthz`, agent)).toBe("answered 200");
    expect(Object.values(agent.freeSockets).flat()).toHaveLength(1);
    await fixture.stop();
    // On the connection kept alive from before the stop: nothing of the stopped host answers any more.
    expect(await get(`${fixture.url}/healthz`, agent)).toMatch(/^failed: /);
    agent.destroy();
  });
});
