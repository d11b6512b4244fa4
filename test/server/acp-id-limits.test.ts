// Issue 27, item 1: an overlong id is refused by one rule (src/protocol/id-limits.ts), the same over both transports.
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { cleanUp, initializeParams, RawSocket, startFixture, type BerthFixture } from "./server-harness.js";

afterEach(cleanUp);

const longRequestId = "i".repeat(1_500);
const longSessionId = "s".repeat(2_000);
const limit = { limit: 1024 };
const expectedRequestIdError = {
  code: -32600,
  message: "Invalid request: the request id is 1500 characters long, more than the limit of 1024",
  data: limit,
};
const expectedSessionIdError = {
  code: -32602,
  message: "Invalid params: the session id is 2000 characters long, more than the limit of 1024",
  data: limit,
};

/** `POST /acp` of each message on one initialized Streamable HTTP connection, answered by its JSON body. */
async function overHttp(fixture: BerthFixture): Promise<(message: unknown) => Promise<unknown>> {
  const auth = { authorization: `Bearer ${fixture.token}`, "content-type": "application/json" };
  const initialized = await fetch(`${fixture.url}/acp`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: initializeParams }),
  });
  expect(initialized.status).toBe(200);
  const headers = { ...auth, "acp-connection-id": initialized.headers.get("acp-connection-id")! };
  return async (message) => {
    const res = await fetch(`${fixture.url}/acp`, { method: "POST", headers, body: JSON.stringify(message) });
    expect(res.status).toBe(400);
    return res.json();
  };
}

describe("an overlong id gets the same JSON-RPC error over WebSocket and Streamable HTTP", () => {
  it("an overlong request id: -32600 under id null; an overlong sessionId: -32602 under the request's id; the WebSocket connection carries on", async () => {
    const fixture = await startFixture();
    const raw = await RawSocket.open(fixture.acpUrl, fixture.token);
    raw.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await raw.response(1);
    const post = await overHttp(fixture);

    const overlongRequestId = { jsonrpc: "2.0", id: longRequestId, method: "session/list", params: {} };
    raw.send(overlongRequestId);
    const overWebSocket = await raw.response(null);
    const overHttpBody = await post(overlongRequestId);
    expect(overWebSocket).toEqual({ jsonrpc: "2.0", id: null, error: expectedRequestIdError });
    expect(overHttpBody).toEqual(overWebSocket);

    const overlongSession = { jsonrpc: "2.0", id: 7, method: "session/prompt", params: { sessionId: longSessionId, prompt: [] } };
    raw.send(overlongSession);
    const sessionOverWebSocket = await raw.response(7);
    expect(sessionOverWebSocket).toEqual({ jsonrpc: "2.0", id: 7, error: expectedSessionIdError });
    expect(await post(overlongSession)).toEqual(sessionOverWebSocket);

    // The WebSocket connection carries on.
    raw.send({ jsonrpc: "2.0", id: 8, method: "session/list", params: {} });
    expect(await raw.response(8)).toMatchObject({ result: { sessions: [] } });
    expect(raw.ws.readyState).toBe(WebSocket.OPEN);
    await raw.close();
  });
});
