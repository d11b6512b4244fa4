// acpx (npm, the headless ACP client) drives Berth through `berth connect`, as a user would:
// one real acpx process per command, its detached queue owner launching `berth connect`
// as the agent command, Berth running the demo agent. See docs/api.md "Tested clients".
import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { demoAgentMain } from "../../src/agents/agent-registry.js";
import { cleanUp, startFixture, tempDir, type BerthFixture } from "../server/server-harness.js";
import { AcpxRunner, berthConnectCommand, requestsSent, waitFor, type AcpxResult } from "./acpx-runner.js";

interface SessionView {
  readonly id: string;
  readonly agent: string;
  readonly pid: number | null;
  readonly holders: number;
  readonly turnActive: boolean;
}

const runners: AcpxRunner[] = [];

/** acpx leaves `acpx-*` directories in the system's temp folder whatever TMPDIR says: those this file's runs made are removed. */
const acpxTempDirs = () => readdirSync(tmpdir()).filter((name) => /^acpx-[0-9a-f]+$/.test(name));
const acpxTempBefore = new Set(acpxTempDirs());

afterEach(async () => {
  const left = (await Promise.all(runners.splice(0).map((runner) => runner.stop()))).flat();
  for (const name of acpxTempDirs()) if (!acpxTempBefore.has(name)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  await cleanUp();
  if (left.length > 0) throw new Error(`acpx processes left running: ${left.join(", ")}`);
});

/** A Berth with the demo agent and `demo-auth`: the demo agent with `--require-auth`, its token in its host-side environment. */
async function berth(releaseGrace: string): Promise<BerthFixture> {
  const stateDir = tempDir("berth-acpx-agent-state-");
  return startFixture({
    config: {
      releaseGrace,
      agents: {
        "demo-auth": {
          command: process.execPath,
          args: [demoAgentMain, "--require-auth", "--state-dir", stateDir],
          env: { DEMO_TOKEN: "held-by-the-host" },
        },
      },
    },
  });
}

/** acpx in a temp HOME, in the fixture's work directory, with `berth connect --agent AGENT` as its agent. */
function acpx(fixture: BerthFixture, agent: string) {
  const runner = new AcpxRunner(tempDir("berth-acpx-home-"), fixture.workDir);
  runners.push(runner);
  const agentCommand = berthConnectCommand(fixture.url, fixture.token, agent);
  // `--ttl 1`: the queue owner (and with it `berth connect`) ends a second after its last command.
  const run = (args: readonly string[], env?: Record<string, string>) => runner.run(["--agent", agentCommand, "--ttl", "1", ...args], { env });
  // `start`: without waiting for the previous queue owner; for `/sleep 1h` (none runs) and `cancel` (meant for its owner).
  const start = (args: readonly string[]) => runner.start(["--agent", agentCommand, "--ttl", "1", ...args]);
  return { runner, run, start };
}

async function session(fixture: BerthFixture, id: string): Promise<SessionView> {
  const response = await fixture.api(`/api/sessions/${id}`);
  expect(response.status).toBe(200);
  return (await response.json()) as SessionView;
}

function ok(result: AcpxResult): AcpxResult {
  if (result.code !== 0) throw new Error(`acpx exited with ${result.code}; stdout: ${result.stdout}; stderr: ${result.stderr}`);
  return result;
}

/** The session id `acpx sessions new` prints. */
function newSessionId(result: AcpxResult): string {
  const id = ok(result).stdout.trim().split("\n").at(-1)!;
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  return id;
}

describe("acpx through berth connect", () => {
  it("prompts, answers permissions, cancels, sets mode, model and a config option; reopens the same warm process", async () => {
    const fixture = await berth("60s");
    const { runner, run, start } = acpx(fixture, "demo");

    const sessionId = newSessionId(await run(["sessions", "new"]));
    const created = await session(fixture, sessionId);
    expect(created).toMatchObject({ agent: "demo" });

    // Prompt: the demo agent echoes; --format json shows the ACP traffic acpx saw.
    const prompted = ok(await run(["--format", "json", "hello through berth"]));
    const chunks = prompted.messages
      .filter((m) => m.method === "session/update")
      .map((m) => (m.params as { update: { sessionUpdate: string; content?: { text?: string } } }).update)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => u.content?.text ?? "")
      .join("");
    expect(chunks).toBe("hello through berth");
    const promptResponse = prompted.messages.find((m) => (m.result as { stopReason?: string } | undefined)?.stopReason !== undefined);
    expect(promptResponse?.result).toMatchObject({ stopReason: "end_turn", usage: { totalTokens: expect.any(Number) } });

    // Permission: acpx answers the agent's session/request_permission by its policy.
    expect(ok(await run(["--approve-all", "/ask may I?"])).stdout).toContain("You chose: allow");
    // acpx exits 5 (PERMISSION_DENIED) when its queue owner denied every permission it counted: each command here
    // has an owner of its own (the runner waits for the previous one to end), which counts this deny alone.
    const denied = await run(["--deny-all", "/ask may I?"]);
    expect(denied.code, `stderr: ${denied.stderr}`).toBe(5);
    expect(denied.stdout).toContain("You chose: deny");
    expect(denied.stdout).toContain("[done] end_turn");
    expect((await session(fixture, sessionId)).turnActive).toBe(false);

    // Cancel: a turn that would sleep an hour, cancelled by a second acpx command sent to the owner running it.
    await waitFor(async () => runner.processes().length === 0, "the previous queue owner ends by its --ttl");
    const sleeping = start(["/sleep 1h"]);
    // acpx starts its queue owner and berth connect first: seconds on a loaded machine.
    await waitFor(async () => (await session(fixture, sessionId)).turnActive, "the sleeping turn runs in Berth", 60_000);
    expect(ok(await start(["cancel"]).done).stdout).toContain("cancel requested");
    const slept = await sleeping.done;
    expect(slept.code, `stderr: ${slept.stderr}`).toBe(0);
    expect(slept.stdout).toContain("[done] cancelled");
    await waitFor(async () => !(await session(fixture, sessionId)).turnActive, "the turn ended in Berth");

    // set-mode, then the agent reports the mode it is in.
    expect(ok(await run(["set-mode", "code"])).stdout).toContain("mode set: code");
    expect(ok(await run(["/mode"])).stdout).toContain("code");

    // --model on an existing session: acpx sends session/set_model.
    const withModel = ok(await run(["--model", "demo-large", "--format", "json", "model?"]));
    expect(requestsSent(withModel)).toContain("session/set_model");
    expect(ok(await run(["set", "verbosity", "terse"])).stdout).toContain("config set: verbosity=terse");
    // Another client of the same session sees what acpx chose, as Berth journaled it.
    const observer = await fixture.connect({ agent: "demo" });
    const resumed = await observer.agent.request("session/resume", { sessionId, cwd: fixture.workDir });
    expect(resumed).toMatchObject({
      modes: { currentModeId: "code" },
      models: { currentModelId: "demo-large" },
      configOptions: [{ id: "verbosity", currentValue: "terse" }],
    });
    await observer.close();

    // Reopen: once acpx's queue owner ended (no holder left), a new acpx command starts a new
    // `berth connect`, resumes the session and finds the very same agent process, warm.
    const warm = await waitFor(async () => {
      const view = await session(fixture, sessionId);
      return view.holders === 0 && view.pid !== null ? view : undefined;
    }, "acpx's queue owner left the session");
    const reopened = ok(await run(["--format", "json", "still there?"]));
    expect(requestsSent(reopened)).toEqual(expect.arrayContaining(["initialize", "session/resume", "session/prompt"]));
    expect(requestsSent(reopened)).not.toContain("session/new");
    const after = await session(fixture, sessionId);
    expect(after.pid).toBe(warm.pid);
    expect(created.pid === null || created.pid === warm.pid).toBe(true);

    // exec: a one-shot session of its own, through the same bridge.
    const oneShot = ok(await run(["--format", "json", "exec", "just once"]));
    expect(requestsSent(oneShot)).toContain("session/new");
    expect(oneShot.stdout).toContain("just once");
    const listed = (await (await fixture.api("/api/sessions")).json()) as { sessions: SessionView[] };
    expect(listed.sessions.map((s) => s.agent)).toEqual(["demo", "demo"]);

    // sessions close: acpx forgets the session; in Berth it stays, listed and readable.
    ok(await run(["sessions", "close"]));
    expect((await session(fixture, sessionId)).id).toBe(sessionId);
  }, 180_000);

  it("logs in through ACPX_AUTH_DEMO_TOKEN; Berth replays the login to the session's next process", async () => {
    const fixture = await berth("1s");
    const { run } = acpx(fixture, "demo-auth");

    // No credential: acpx does not authenticate, the agent's -32000 reaches it through Berth.
    const refused = await run(["sessions", "new"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Authentication required: call authenticate with "demo-token" first');
    const failPolicy = await run(["--auth-policy", "fail", "sessions", "new"]);
    expect(failPolicy.code).not.toBe(0);
    expect(failPolicy.stderr).toContain("agent advertised auth methods [demo-token, demo-env] but no matching credentials found");

    // With ACPX_AUTH_DEMO_TOKEN acpx calls authenticate {methodId: "demo-token"}; Berth forwards it.
    const login = { ACPX_AUTH_DEMO_TOKEN: "set-in-acpx-env" };
    const sessionId = newSessionId(await run(["sessions", "new"], login));
    const prompted = ok(await run(["--format", "json", "signed in"], login));
    expect(requestsSent(prompted)).toEqual(expect.arrayContaining(["initialize", "authenticate", "session/prompt"]));
    const first = await waitFor(async () => {
      const view = await session(fixture, sessionId);
      return view.pid !== null ? view : undefined;
    }, "the session has a process");

    // The queue owner ends, the grace passes, Berth releases the process.
    await waitFor(async () => (await session(fixture, sessionId)).pid === null, "Berth released the agent process");

    // Reopened without a credential: acpx does not authenticate, yet the new process accepts the
    // session because Berth replays the remembered login before loading it.
    const reopened = ok(await run(["--format", "json", "back again"]));
    expect(requestsSent(reopened)).not.toContain("authenticate");
    expect(reopened.stdout).toContain("back again");
    const second = await session(fixture, sessionId);
    expect(second.pid).not.toBeNull();
    expect(second.pid).not.toBe(first.pid);
  });

  it("shows berth connect's one-line error when the host refuses the token", async () => {
    const fixture = await berth("1s");
    const runner = new AcpxRunner(tempDir("berth-acpx-home-"), fixture.workDir);
    runners.push(runner);
    const refused = await runner.run(["--agent", berthConnectCommand(fixture.url, "not-the-token", "demo"), "--ttl", "1", "sessions", "new"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("refused the token");
    expect(refused.stderr).not.toMatch(/^\s+at /m);
  });
});

describe("acpx directly (the control)", () => {
  it("logs in to the demo agent with ACPX_AUTH_DEMO_TOKEN, the credential in the agent's environment", async () => {
    const dir = tempDir("berth-acpx-direct-");
    const runner = new AcpxRunner(dir, dir);
    runners.push(runner);
    const agentCommand = [process.execPath, demoAgentMain, "--require-auth", "--state-dir", join(dir, "state")].join(" ");
    // `--require-auth`: session/new succeeds only after authenticate took the token from the environment acpx gave it.
    newSessionId(await runner.run(["--agent", agentCommand, "--ttl", "1", "sessions", "new"], { env: { ACPX_AUTH_DEMO_TOKEN: "direct" } }));
  });
});
