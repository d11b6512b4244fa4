import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { fixtureLogins } from "../logins/fixture-logins.js";
import { cleanUp, startFixture, waitUntil, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

/** A client of a login terminal: everything it was sent, as text, and its text frames parsed. */
function terminalClient(berth: BerthFixture, path: string, headers: Record<string, string> = { authorization: `Bearer ${berth.token}` }) {
  const ws = new WebSocket(`${berth.url.replace(/^http/, "ws")}${path}`, { headers });
  let screen = "";
  const messages: Record<string, unknown>[] = [];
  ws.on("message", (data: Buffer, isBinary) => {
    if (isBinary) screen += data.toString("utf8");
    else messages.push(JSON.parse(data.toString("utf8")) as Record<string, unknown>);
  });
  const refused = new Promise<{ status: number; body: string }>((resolve) =>
    ws.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    }),
  );
  ws.on("error", () => undefined);
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  return { ws, screen: () => screen, messages, refused, closed };
}

const demo = "/api/agents/demo/logins/demo/terminal";

describe("the login terminal WebSocket", () => {
  it("sends the screen as binary frames, takes keys and JSON input, and ends with an exit frame and close 1000", async () => {
    const berth = await startFixture({ loginCommands: fixtureLogins });
    const client = terminalClient(berth, `${demo}?cols=90&rows=20`);
    await waitUntil(() => client.screen().includes("Name: "), "the login screen arrived");
    expect(client.screen()).toContain("terminal: tty 90x20");
    client.ws.send(JSON.stringify({ type: "input", data: "li" }));
    client.ws.send(Buffer.from("n\r"), { binary: true });
    expect(await client.closed).toBe(1000);
    expect(client.screen()).toContain("logged in as lin");
    expect(client.messages).toEqual([{ type: "exit", exitCode: 0, signal: null }]);
  });

  it("cuts a client that stopped reading once its share of the client buffer budget is queued; the login runs on", async () => {
    const berth = await startFixture({
      config: { server: { clientBufferBudget: "64KiB", clientHighWater: "64KiB" } },
      // A login whose screen never stops filling.
      loginCommands: async () => ({ command: "yes", args: ["a login that prints without end"], env: {} }),
    });
    const client = terminalClient(berth, "/api/agents/demo/logins/flood/terminal");
    // The client reads nothing more: what the host sends it queues up in the kernel, then in the host.
    client.ws.once("open", () => (client.ws as unknown as { _socket: { pause(): void } })._socket.pause());
    const { logins } = berth.berth.host;
    await waitUntil(() => logins.list()[0]?.clients === 1, "the client is attached");
    await waitUntil(() => logins.list()[0]?.clients === 0, "the client is cut", 30_000);
    expect(logins.list()).toEqual([expect.objectContaining({ agentId: "demo", methodId: "flood" })]);
    // Cut for what it had queued (counted in the budget), not by the keepalive for the pongs it no longer read.
    const metrics = await (await berth.api("/metrics")).text();
    expect(Number(/^berth_client_queued_bytes_peak (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(64 * 1024);
    client.ws.terminate();
  });

  it("answers a text frame it cannot use with an error frame and carries on", async () => {
    const berth = await startFixture({ loginCommands: fixtureLogins });
    const client = terminalClient(berth, demo);
    await waitUntil(() => client.screen().includes("Name: "), "the login screen arrived");
    client.ws.send("hello");
    client.ws.send(JSON.stringify({ type: "resize", cols: 0, rows: 5 }));
    client.ws.send(JSON.stringify({ type: "paste" }));
    await waitUntil(() => client.messages.length === 3, "three error frames");
    expect(client.messages.map((message) => message.type)).toEqual(["error", "error", "error"]);
    expect(client.messages[0]!.message).toMatch(/a text frame is a JSON message/);
    expect(client.messages[1]!.message).toMatch(/from 1 to 1000, got cols 0 and rows 5/);
    expect(client.messages[2]!.message).toMatch(/unknown message.*"paste"/);
    client.ws.send(JSON.stringify({ type: "resize", cols: 70, rows: 10 }));
    await waitUntil(() => client.screen().includes("[resized to 70x10]"), "the login saw the resize");
  });

  it("lets in a ticket instead of the token, once, and refuses a client with neither", async () => {
    const berth = await startFixture({ loginCommands: fixtureLogins });
    expect((await terminalClient(berth, demo, {}).refused).status).toBe(401);
    const { ticket } = (await (await berth.api("/api/tickets", { method: "POST" })).json()) as { ticket: string };
    const client = terminalClient(berth, `${demo}?ticket=${ticket}`, {});
    await waitUntil(() => client.screen().includes("Name: "), "the login screen arrived");
    expect((await terminalClient(berth, `${demo}?ticket=${ticket}`, {}).refused).status).toBe(401);
  });

  it("refuses another site's page, a method not offered, another method while one runs, and a bad size, each saying why", async () => {
    const berth = await startFixture({ loginCommands: fixtureLogins });
    const auth = { authorization: `Bearer ${berth.token}` };
    expect((await terminalClient(berth, demo, { ...auth, "sec-fetch-site": "cross-site" }).refused).status).toBe(403);
    const unknown = await terminalClient(berth, "/api/agents/demo/logins/nope/terminal").refused;
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({
      error: "no_terminal_login",
      message: expect.stringMatching(/offers|terminal methods: demo, sleep/),
    });
    const running = terminalClient(berth, demo);
    await waitUntil(() => running.screen().includes("Name: "), "the login screen arrived");
    const busy = await terminalClient(berth, "/api/agents/demo/logins/sleep/terminal").refused;
    expect(busy.status).toBe(409);
    expect(JSON.parse(busy.body)).toMatchObject({ error: "login_running", message: expect.stringMatching(/by method "demo" is running/) });
    const badSize = await terminalClient(berth, `${demo}?cols=abc`).refused;
    expect(badSize.status).toBe(400);
    expect(JSON.parse(badSize.body)).toMatchObject({ error: "invalid_size" });
  });

  it("lists running logins and stops one on DELETE: its clients get the exit frame", async () => {
    const berth = await startFixture({ loginCommands: fixtureLogins });
    const client = terminalClient(berth, "/api/agents/demo/logins/sleep/terminal");
    await new Promise((resolve) => client.ws.once("open", resolve));
    const listed = (await (await berth.api("/api/terminal-logins")).json()) as { logins: { agentId: string; methodId: string; clients: number }[] };
    expect(listed.logins).toEqual([expect.objectContaining({ agentId: "demo", methodId: "sleep", clients: 1 })]);
    expect((await berth.api("/api/agents/demo/logins/demo", { method: "DELETE" })).status).toBe(404);
    expect((await berth.api("/api/agents/demo/logins/sleep", { method: "DELETE" })).status).toBe(204);
    expect(await client.closed).toBe(1000);
    expect(client.messages).toEqual([expect.objectContaining({ type: "exit" })]);
  });

  it("finds the agent's own terminal logins by default: the demo agent offers none, and the refusal says so", async () => {
    const berth = await startFixture();
    const refused = await terminalClient(berth, demo).refused;
    expect(refused.status).toBe(404);
    expect(JSON.parse(refused.body)).toMatchObject({ error: "no_terminal_login", message: expect.stringContaining("it offers none") });
  });

  it("refuses a path with malformed percent-encoding with a 400 naming it, and keeps serving", async () => {
    const berth = await startFixture({ loginCommands: fixtureLogins });
    const refused = await terminalClient(berth, "/api/agents/%E0/logins/demo/terminal").refused;
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({ error: "invalid_path", message: expect.stringContaining('"%E0"') });
    expect((await berth.api("/healthz")).status).toBe(200);
  });
});
