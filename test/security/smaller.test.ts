// Issue 9, item 8: the smaller defects, each shown fixed.
import { connect } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { webAddress } from "../../web/src/ui/links.js";
import { BerthProcess, cliMain } from "../server/serve-process.js";
import { initializeParams, RawSocket } from "../server/server-harness.js";
import { cleanUp, startSecureBerth, waitUntil } from "./security-harness.js";

afterEach(cleanUp);

const agentScript = new URL("./fixtures/url-elicitation-agent.mjs", import.meta.url).pathname;

/** How a socket ended after `frame` was its first message. */
function closeAfterFirstFrame(acpUrl: string, token: string, frame: string | Buffer): Promise<{ code: number; messages: string[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(acpUrl, { headers: { authorization: `Bearer ${token}` } });
    const messages: string[] = [];
    ws.on("message", (data) => messages.push(data.toString()));
    ws.once("open", () => ws.send(frame));
    ws.once("close", (code) => resolve({ code, messages }));
    ws.once("error", reject);
  });
}

describe("item 8: smaller defects", () => {
  it("validates numbers, takes the Bearer scheme in any case, and logs a dropped body as the client's doing", async () => {
    const berth = await startSecureBerth();
    const bearer = { authorization: `Bearer ${berth.token}` };
    for (const query of ["after=99999999999999999999999", "after=9007199254740992", "limit=1e3", "after=-1"]) {
      const response = await fetch(`${berth.url}/api/sessions/any/events?${query}`, { headers: bearer });
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe("invalid_query");
    }
    expect((await fetch(`${berth.url}/api/records?limit=99999999999999999999`, { headers: bearer })).status).toBe(400);
    for (const scheme of ["bearer", "BEARER", "Bearer"]) {
      expect((await fetch(`${berth.url}/api/agents`, { headers: { authorization: `${scheme} ${berth.token}` } })).status, scheme).toBe(200);
    }

    // A client announces 1000 bytes, sends 10 and hangs up.
    const socket = connect(berth.port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(
      `POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:${berth.port}\r\nAuthorization: Bearer ${berth.token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"cwd": "/`,
    );
    await waitUntil(() => berth.berth.host.listSessions().length === 0 && socket.bytesWritten > 100, "the partial request is sent");
    socket.destroy();
    await waitUntil(() => berth.logs.some((l) => l.msg === "client went away before its request was complete"), "the dropped body is logged");
    expect(berth.logs.filter((l) => l.level >= 50)).toEqual([]);
  });

  it("answers an overlong session id with an error and closes a socket whose first frame is garbage or binary", async () => {
    const berth = await startSecureBerth();
    const acpUrl = `${berth.url.replace("http", "ws")}/acp`;
    const raw = await RawSocket.open(acpUrl, berth.token);
    raw.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await raw.response(1);
    raw.send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "s".repeat(1025), prompt: [] } });
    expect(await raw.response(2)).toMatchObject({
      error: { code: -32602, message: expect.stringContaining("1025 characters"), data: { limit: 1024 } },
    });
    raw.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s".repeat(5000) } });
    // The connection carries on.
    raw.send({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: berth.workDir, mcpServers: [] } });
    expect(await raw.response(3)).toMatchObject({ result: { sessionId: expect.any(String) } });
    expect(raw.ws.readyState).toBe(WebSocket.OPEN);
    await raw.close();

    const garbage = await closeAfterFirstFrame(acpUrl, berth.token, "\u0000 not json at all");
    expect(garbage.code).toBe(1002);
    expect(JSON.parse(garbage.messages[0]!)).toMatchObject({ id: null, error: { code: -32700 } });
    expect((await closeAfterFirstFrame(acpUrl, berth.token, "42")).code).toBe(1002);
    expect((await closeAfterFirstFrame(acpUrl, berth.token, Buffer.from([0xff, 0x00, 0x13]))).code).toBe(1003);
  });

  it("refuses a URL-mode elicitation (Berth advertises forms only); the dashboard opens only http(s) links", async () => {
    const berth = await startSecureBerth({ agents: { urly: { command: process.execPath, args: [agentScript] } }, defaultAgent: "urly" });
    const raw = await RawSocket.open(`${berth.url.replace("http", "ws")}/acp`, berth.token);
    raw.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { ...initializeParams, clientCapabilities: { elicitation: { form: {}, url: {} } } },
    });
    await raw.response(1);
    raw.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: berth.workDir, mcpServers: [] } });
    const { sessionId } = (await raw.response(2)).result as { sessionId: string };
    raw.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "sign me in" }] } });
    expect(await raw.response(3)).toMatchObject({ result: { stopReason: "end_turn" } });
    const said = raw.messages.filter((m) => m.method === "session/update").map((m) => JSON.stringify(m.params));
    expect(said.join("\n")).toContain("refused: -32602 Invalid params: Berth supports form elicitations only");
    // Nobody was asked: no question, no request to the client.
    expect(raw.messages.some((m) => m.method === "elicitation/create")).toBe(false);
    expect(berth.berth.host.pendingQuestions()).toEqual([]);
    await raw.close();

    expect(webAddress("https://example.com/login")?.host).toBe("example.com");
    expect(webAddress("http://127.0.0.1:3000/")?.href).toBe("http://127.0.0.1:3000/");
    for (const url of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "file:///etc/passwd",
      "vbscript:x",
      "/relative",
      "not a url",
    ]) {
      expect(webAddress(url), url).toBeUndefined();
    }
  });

  it("berth serve prints the token only when it made it or is asked; berth token prints it and the link", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "berth-sec-serve-"));
    const started: BerthProcess[] = [];
    const serve = async (...flags: string[]) => {
      const server = new BerthProcess(["serve", "--port", "0", "--data-dir", dataDir, ...flags], { XDG_CONFIG_HOME: dataDir });
      started.push(server);
      await server.startupLine();
      return server;
    };
    const stop = async (server: BerthProcess) => {
      server.signal("SIGINT");
      await server.exited;
    };
    const run = promisify(execFile);
    const berth = (...args: string[]) =>
      run(process.execPath, [cliMain, ...args, "--data-dir", dataDir], { env: { ...process.env, XDG_CONFIG_HOME: dataDir } });
    try {
      const first = await serve();
      const { token, url } = await first.startupLine();
      expect(first.stdout).toContain(`${url}/?token=${token}`);
      await stop(first);

      const second = await serve();
      const line = (await second.startupLine()).line;
      expect(line).not.toContain(token);
      expect(line).toMatch(
        new RegExp(
          `^Berth is running: http://127\\.0\\.0\\.1:\\d+/ \\(ACP: ws://127\\.0\\.0\\.1:\\d+/acp\\); dashboard link: node dist/cli/main\\.js token --link --data-dir ${dataDir}$`,
        ),
      );
      expect(second.stdout + second.stderr).not.toContain(token);
      expect((await berth("token")).stdout).toBe(`${token}\n`);
      expect((await berth("token", "--link")).stdout).toBe(`${(await second.startupLine()).url}/?token=${token}\n`);
      await stop(second);
      await expect(berth("token", "--link")).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining("no Berth host is running") });

      const asked = await serve("--print-token");
      expect((await asked.startupLine()).line).toContain(`/?token=${token}`);
      await stop(asked);
    } finally {
      for (const server of started) server.killGroup();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
