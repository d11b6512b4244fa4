import { execFile, spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { promisify } from "node:util";
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type SessionNotification } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliMain, serveOnTempDir } from "../server/serve-process.js";
import { processIsRunning, waitUntil, waitUntilGone } from "../support/process-table.js";

const run = promisify(execFile);
let dataDir: string;
let workDir: string;
let serve: Awaited<ReturnType<typeof serveOnTempDir>>;
let base: { url: string; token: string };

async function berth(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const running = run(process.execPath, [cliMain, ...args, "--data-dir", dataDir], { env: { ...process.env, XDG_CONFIG_HOME: dataDir } });
    // Nothing piped in, as from a person's shell: `berth connect` has no editor's `initialize` to answer.
    running.child.stdin?.end();
    const { stdout, stderr } = await running;
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

async function rest<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`${base.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${base.token}`, "content-type": "application/json" },
  });
  return (await response.json()) as T;
}

/** Polls a REST resource until `accept` holds; fails naming `what` if it does not within `timeoutMs`. */
async function restUntil<T>(path: string, accept: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await rest<T>(path);
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what} (last answer: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An editor that launched `berth connect` as its agent command, speaking ACP on the bridge's stdio. */
function editorThroughBridge(...args: string[]) {
  const bridge = spawn(process.execPath, [cliMain, "connect", "--data-dir", dataDir, ...args], {
    env: { ...process.env, XDG_CONFIG_HOME: dataDir },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  bridge.stderr!.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")));
  const updates: SessionNotification[] = [];
  const connection = client({ name: "test-editor" })
    .onNotification(methods.client.session.update, ({ params }) => void updates.push(params))
    .connect(ndJsonStream(Writable.toWeb(bridge.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(bridge.stdout!) as ReadableStream<Uint8Array>));
  const exited = new Promise<number | null>((resolve) => bridge.once("exit", resolve));
  return { bridge, agent: connection.agent, updates, exited, stderr: () => stderr, close: () => bridge.stdin!.end() };
}

beforeAll(async () => {
  workDir = realpathSync(mkdtempSync(join(tmpdir(), "berth-cli-work-")));
  // Long enough for a second bridge to start and reopen the session on a loaded machine; short enough to see the release.
  serve = await serveOnTempDir(["--release-grace", "10s"]);
  dataDir = serve.dataDir;
  base = serve;
});

afterAll(async () => {
  await serve.stop();
  rmSync(workDir, { recursive: true, force: true });
});

describe("berth client commands against a running `berth serve`", () => {
  it("berth connect bridges an editor's stdio to the host; closing the editor leaves the agent warm for the grace", async () => {
    const editor = editorThroughBridge();
    await editor.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
    const { stopReason } = await editor.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "through the bridge" }],
    });
    expect(stopReason).toBe("end_turn");
    await waitUntil(() => editor.updates.length >= 3, "the streamed reply arrives");
    const { pid } = await rest<{ pid: number }>(`/api/sessions/${sessionId}`);

    editor.close();
    expect(await editor.exited).toBe(0);
    // The host learns of the closed socket a moment after the bridge exits.
    const afterClose = await restUntil<{ pid: number; holders: number }>(
      `/api/sessions/${sessionId}`,
      (s) => s.holders === 0,
      "the bridge's hold is released",
    );
    expect(afterClose).toMatchObject({ pid, holders: 0 });

    const again = editorThroughBridge();
    await again.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    await again.agent.request(methods.agent.session.load, { sessionId, cwd: workDir, mcpServers: [] });
    expect((await rest<{ pid: number }>(`/api/sessions/${sessionId}`)).pid).toBe(pid);
    expect(JSON.stringify(again.updates)).toContain("through the bridge");
    again.close();
    await again.exited;
    expect(await waitUntilGone([pid], 30_000)).toEqual([]);
  });

  it("berth connect --agent binds the connection to the agent; an unknown one is refused in one line naming the configured agents", async () => {
    const editor = editorThroughBridge("--agent", "demo");
    await editor.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: workDir, mcpServers: [] });
    expect(await rest<{ agent: string }>(`/api/sessions/${sessionId}`)).toMatchObject({ agent: "demo" });
    editor.close();
    expect(await editor.exited).toBe(0);

    expect(await berth("connect", "--agent", "nope")).toEqual({
      code: 1,
      stdout: "",
      stderr: 'berth connect: unknown agent "nope" (configured agents: demo)\n',
    });
  });

  it("berth connect without a host answering, or with a token the host refuses, says so in one line and exits 1; an editor gets it as its initialize answer", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    expect(await berth("connect", "--url", `http://127.0.0.1:${closedPort}`, "--token", "any")).toEqual({
      code: 1,
      stdout: "",
      stderr: `berth connect: no Berth host answers at ws://127.0.0.1:${closedPort}/acp (start one with "node dist/cli/main.js serve")\n`,
    });
    // An editor shows what its `initialize` gets, not the bridge's stderr.
    const editor = editorThroughBridge("--url", `http://127.0.0.1:${closedPort}`, "--token", "any");
    const refused = await editor.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({
      code: -32603,
      message: `no Berth host answers at ws://127.0.0.1:${closedPort}/acp (start one with "node dist/cli/main.js serve")`,
      data: { url: `ws://127.0.0.1:${closedPort}/acp` },
    });
    expect(await editor.exited).toBe(1);
    expect(editor.stderr()).toBe(`berth connect: ${(refused as Error).message}\n`);
    // A parent that holds stdin open and says nothing (a supervisor) is not waited for: the bridge still exits 1.
    const silent = editorThroughBridge("--url", `http://127.0.0.1:${closedPort}`, "--token", "any");
    expect(await silent.exited).toBe(1);
    expect(silent.stderr()).toContain("berth connect: no Berth host answers");
    silent.close();
    expect(await berth("connect", "--token", "wrong")).toEqual({
      code: 1,
      stdout: "",
      stderr: "berth connect: the host refused the token (401); check --token or the data directory\n",
    });
  });

  it("berth sessions, status, questions and answer work against the running host", async () => {
    const created = await rest<{ id: string }>("/api/sessions", { method: "POST", body: JSON.stringify({ cwd: workDir }) });
    const editor = editorThroughBridge();
    await editor.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    await editor.agent.request(methods.agent.session.resume, { sessionId: created.id, cwd: workDir, mcpServers: [] });
    const turn = editor.agent.request(methods.agent.session.prompt, { sessionId: created.id, prompt: [{ type: "text", text: "/ask Ship it?" }] });

    await restUntil<{ questions: unknown[] }>("/api/questions", ({ questions }) => questions.length > 0, "the agent's question is pending");
    const questions = (await berth("questions")).stdout;
    expect(questions).toContain("Ship it?");
    expect(questions).toMatch(/^QUESTION\s+SESSION\s+KIND\s+ASKED\s+ASKS\s+ANSWERS$/m);
    expect(questions).toContain("allow | deny");
    const questionId = questions.split("\n")[1]!.split(/\s+/)[0]!;

    const sessions = await berth("sessions");
    expect(sessions.code).toBe(0);
    expect(sessions.stdout).toMatch(new RegExp(`^${created.id}\\s+demo\\s+live\\s+\\d+\\s+1\\s+running\\s+1\\s+${workDir}`, "m"));
    const status = await berth("status");
    expect(status.stdout).toContain("Locations (1 cached)");
    expect(status.stdout).toMatch(new RegExp(`^${workDir}\\s+retained\\s+active-execution`, "m"));

    expect(await berth("answer", questionId, "maybe")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('has no option "maybe" (options: allow, deny)'),
    });
    expect(await berth("answer", questionId, "allow")).toMatchObject({ code: 0, stdout: `answered ${questionId} (session ${created.id})\n` });
    expect((await turn).stopReason).toBe("end_turn");
    expect(await berth("answer", questionId, "deny")).toMatchObject({ code: 1, stderr: expect.stringContaining("was already answered") });
    expect(JSON.parse((await berth("sessions", "--json")).stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ id: created.id })]));
    editor.close();
    await editor.exited;
  });

  it("clear errors and exit codes without a host or with a wrong token", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "berth-cli-none-"));
    const none = await run(process.execPath, [cliMain, "status", "--data-dir", elsewhere]).catch((e: { code: number; stderr: string }) => e);
    expect(none).toMatchObject({ code: 1, stderr: expect.stringContaining(`no Berth host is running on ${elsewhere}`) });
    expect(await berth("sessions", "--token", "wrong")).toMatchObject({ code: 1, stderr: expect.stringContaining("refused the token") });
    expect(await berth("answer", "q", "accept", "--content", "{oops")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--content: expected a JSON object"),
    });
    expect(processIsRunning(serve.server.pid)).toBe(true);
    rmSync(elsewhere, { recursive: true, force: true });
  });
});
