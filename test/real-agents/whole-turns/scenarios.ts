import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PermissionOption, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { LocationView } from "../../../src/host/views.js";
import { type AcpTestClient, type ToolUpdate, toolUpdates } from "../../server/server-harness.js";
import { gate } from "../../support/model-endpoint/script.js";
import { descendantsOf, waitUntilGone } from "../../support/process-table.js";
import type { AgentUnderTest, ScenarioName } from "./agent-under-test.js";
import { commandLineOf, World, type Knobs } from "./world.js";

/**
 * The whole-turn scenarios of issue 10, written once for any real agent (agents/*.ts): a real
 * `berth serve` runs the agent, pointed at a scripted model endpoint (test/support/model-endpoint),
 * and ACP clients over WebSocket drive it. Each agent's test file calls `describeWholeTurns`.
 * Scenarios that need the same Berth knobs share one world (one Berth, one agent profile probe);
 * each deletes its sessions after itself and checks that every agent process it saw is gone.
 */

/**
 * What a tool call update shows as its output: its text content, else its raw output (codex-acp
 * reports a command's output only as `rawOutput`, e.g. `{ formatted_output, exit_code, … }`).
 */
function outputText(update: ToolUpdate): string {
  const text = (update.content ?? []).map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : "")).join("");
  return text || (update.rawOutput === undefined ? "" : JSON.stringify(update.rawOutput));
}

/** Each tool call of a session, once, with its last status and output, in the order they began. */
export function toolCalls(client: AcpTestClient, sessionId: string): { id: string; status: string | null | undefined; output: string }[] {
  const calls = new Map<string, { id: string; status: string | null | undefined; output: string }>();
  for (const update of toolUpdates(client, sessionId)) {
    const call = calls.get(update.toolCallId) ?? { id: update.toolCallId, status: undefined, output: "" };
    if (update.status) call.status = update.status;
    if (update.content || update.rawOutput !== undefined) call.output = outputText(update);
    calls.set(update.toolCallId, call);
  }
  return [...calls.values()];
}

/** The pid of the process running `command` exactly among the agent's descendants, if it runs. */
function runningCommand(agentPid: number, command: string): number | undefined {
  return descendantsOf(agentPid).find((pid) => commandLineOf(pid) === command);
}

/**
 * Bounds, not expectations: a real agent starts in 2–3 s on an idle machine, but 10–20 s on a
 * 2-core machine running other suites beside it (measured, load average 11).
 */
const scenarioTimeoutMs = 240_000;
const hookTimeoutMs = 60_000;

/** A Berth data directory for the worlds of one `describe`: made before them, removed after them. */
export function useDataDir(agent: AgentUnderTest): () => string {
  let dataDir = "";
  beforeAll(() => {
    dataDir = realpathSync(mkdtempSync(join(tmpdir(), `berth-whole-${agent.id}-data-`)));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  return () => dataDir;
}

/** A world shared by the scenarios of one `describe`: started before them, closed after them. */
export function useWorld(agent: AgentUnderTest, dataDir: () => string, options: { knobs?: Knobs; askPermission?: boolean } = {}): () => World {
  let world: World | undefined;
  beforeAll(async () => {
    world = await World.start(agent, { ...options, dataDir: dataDir() });
  }, hookTimeoutMs);
  let endpointErrors = 0;
  afterEach(async ({ task }) => {
    const offScript = world?.endpoint.errors.slice(endpointErrors) ?? [];
    endpointErrors += offScript.length;
    await world?.endScenario();
    // The agent's own error ("Internal error") hides why: say what it asked that the script did not expect.
    if (task.result?.state === "fail" && offScript.length > 0) throw new Error(`the model endpoint refused the agent: ${offScript.join("; ")}`);
  }, hookTimeoutMs);
  afterAll(async () => {
    await world?.close();
  }, hookTimeoutMs);
  return () => world!;
}

const ms = (duration: string): number => (duration.endsWith("ms") ? Number(duration.slice(0, -2)) : Number(duration.slice(0, -1)) * 1000);

export function describeWholeTurns(agent: AgentUnderTest): void {
  const available = agent.available();
  const title = `${agent.id}: whole turns through Berth against a scripted model endpoint${available ? "" : ` (skipped: ${agent.unavailableReason})`}`;

  /** A scenario, or its skip with the reason when the agent cannot do it. */
  const scenario = (name: ScenarioName, what: string, body: () => Promise<void>): void => {
    const reason = agent.cannot?.[name];
    if (reason) it.skip(`${what} (${agent.id} cannot: ${reason})`, body);
    else it(what, body);
  };

  describe.skipIf(!available)(title, { timeout: scenarioTimeoutMs }, () => {
    // One Berth data directory for the worlds below, which run one after another.
    const sharedDataDir = useDataDir(agent);

    describe("with Berth's default knobs", () => {
      const world = useWorld(agent, sharedDataDir);

      scenario(
        "write-and-run",
        "a prompt whose answer writes a file and runs a command: the file, the command's effect, the transcript with the output, the tool results sent back, and the same on replay",
        async () => {
          const w = world();
          const file = join(w.cwd, "whole-turn.txt");
          const tag = w.play([
            { text: "Writing the file.", toolCalls: [agent.writeTool(file, "hello from the model\n")] },
            { text: "Running the command.", toolCalls: [agent.shellTool("echo ran > whole-turn-marker.txt && echo command-output-42")] },
            { text: "All done." },
          ]);
          const client = await w.connect();
          const sessionId = await client.newSession(w.cwd);
          const prompt = `${tag} write the file and run the command`;

          const result = await client.prompt(sessionId, prompt);

          expect(result.stopReason).toBe("end_turn");
          expect(readFileSync(file, "utf8")).toBe("hello from the model\n");
          expect(readFileSync(join(w.cwd, "whole-turn-marker.txt"), "utf8")).toBe("ran\n");
          const calls = toolCalls(client, sessionId);
          expect(calls.map((c) => c.status)).toEqual(["completed", "completed"]);
          expect(calls[1]!.output).toContain("command-output-42");
          expect(client.texts(sessionId)).toBe("Writing the file.Running the command.All done.");
          // The model was sent each tool's result: the write's, then the command's output.
          const requests = w.requestsOf(tag);
          expect(requests).toHaveLength(3);
          expect(requests[1]!.toolResults).toHaveLength(1);
          expect(requests[2]!.toolResults.at(-1)?.output).toContain("command-output-42");
          expect(w.endpoint.errors).toEqual([]);

          // A new connection loading the session sees the same transcript, nothing doubled.
          const live = toolUpdates(client, sessionId);
          await client.close();
          const again = await w.connect();
          await again.load(sessionId, w.cwd);
          expect(toolUpdates(again, sessionId)).toEqual(live);
          expect(toolCalls(again, sessionId)).toEqual(calls);
          expect(again.texts(sessionId)).toBe("Writing the file.Running the command.All done.");
          expect(again.texts(sessionId, "user_message_chunk")).toBe(prompt);
        },
      );

      scenario(
        "reconnect",
        "disconnect mid-turn, reconnect within the grace: the same agent process, the rest of the turn arrives, nothing doubled",
        async () => {
          const w = world();
          const held = gate();
          const tag = w.play([{ text: "First part.", hold: held.opened, after: " Second part." }]);
          const first = await w.connect();
          const sessionId = await first.newSession(w.cwd);
          const prompt = `${tag} answer in two parts`;
          void first.prompt(sessionId, prompt).catch(() => undefined);
          await w.waitForText(first, sessionId, "First part.");
          const { pid } = await w.session(sessionId);
          w.watchProcesses(pid!);

          await first.close();
          await w.waitFor("the client's hold was released", async () => (await w.session(sessionId)).holders === 0);
          expect(await w.session(sessionId)).toMatchObject({ state: "live", pid, turnActive: true });

          const second = await w.connect();
          await second.load(sessionId, w.cwd);
          expect(second.texts(sessionId)).toBe("First part.");
          held.open();
          const ended = await w.waitForRecord("the turn ended", (r) => r.kind === "turn_ended" && r.sessionId === sessionId);
          expect(ended.record).toMatchObject({ stopReason: "end_turn", error: null });
          await w.waitForText(second, sessionId, " Second part.");
          expect(second.texts(sessionId)).toBe("First part. Second part.");
          expect(second.texts(sessionId, "user_message_chunk")).toBe(prompt);
          expect(await w.session(sessionId)).toMatchObject({ state: "live", pid, holders: 1, turnActive: false });
          expect(w.requestsOf(tag)).toHaveLength(1);
        },
      );

      scenario(
        "restart",
        "Berth stopped with SIGTERM mid-turn and started again: the session is listed and loads; the agent restores its own conversation",
        async () => {
          const w = world();
          const held = gate();
          const tag = w.play([{ text: "Working on it.", hold: held.opened }, { text: "The word was lighthouse." }]);
          const client = await w.connect();
          const sessionId = await client.newSession(w.cwd);
          const firstPrompt = `${tag} remember the word lighthouse`;
          const firstTurn = client.prompt(sessionId, firstPrompt);
          await w.waitForText(client, sessionId, "Working on it.");
          const { pid } = await w.session(sessionId);
          const tree = w.watchProcesses(pid!);

          const exit = await w.stopBerth();
          expect(exit, w.berthErrors()).toEqual({ code: 0, signal: null });
          // Shutdown interrupted the turn while the client still listened: it ends `cancelled` when the
          // agent answered the cancel within Berth's shutdown bound (5 s), else as Berth stopped the agent:
          // then the turn's failure; the client's socket closing first (seen once, before Berth let running
          // prompts' answers out before closing sockets) stays accepted: that wait is bounded at 1 s.
          const outcome = await firstTurn.then(
            (response) => response.stopReason,
            (error: Error) => error.message,
          );
          expect(outcome).toMatch(/^cancelled$|the turn failed: the agent (was stopped by Berth|exited)|^ACP connection closed$/);
          expect(await waitUntilGone(tree)).toEqual([]);

          await w.restartBerth();
          expect((await w.sessions()).map((s) => s.id)).toContain(sessionId);
          const { events } = await w.api<{ events: { kind: string; payload: { reason?: string } }[] }>(`/api/sessions/${sessionId}/events`);
          expect(events.filter((e) => e.kind === "interrupted").map((e) => e.payload.reason)).toEqual(["shutdown"]);
          const later = await w.connect();
          await later.load(sessionId, w.cwd);
          expect(later.texts(sessionId, "user_message_chunk")).toContain(firstPrompt);
          expect(later.texts(sessionId)).toContain("Working on it.");

          const next = await later.prompt(sessionId, "which word was it?");
          expect(next.stopReason).toBe("end_turn");
          // The new agent process sent the model the conversation it restored, with the first prompt.
          const request = w.requestsOf(tag).at(-1)!;
          expect(request.lastUserText).toContain("which word was it?");
          expect(JSON.stringify(request.raw)).toContain("remember the word lighthouse");
          await w.waitForText(later, sessionId, "The word was lighthouse.");
          expect((await w.session(sessionId)).pid).not.toBe(pid);
        },
      );
    });

    describe("with the agent asking permission before it runs a command", () => {
      const world = useWorld(agent, sharedDataDir, { askPermission: true });

      scenario(
        "permission",
        "asked while no client is connected, answered later over REST: the same tool call proceeds; a connected client's copy is withdrawn",
        async () => {
          const w = world();
          const held = gate();
          const marker = join(w.cwd, "approved.txt");
          const tag = w.play([
            {
              text: "I need to run a command.",
              hold: held.opened,
              toolCalls: [agent.shellTool("echo approved > approved.txt && echo permission-output-7")],
            },
            { text: "The command ran." },
          ]);
          const first = await w.connect();
          const sessionId = await first.newSession(w.cwd);
          void first.prompt(sessionId, `${tag} run the command`).catch(() => undefined);
          await w.waitForText(first, sessionId, "I need to run a command.");
          await first.close();
          await w.waitFor("no client holds the session", async () => (await w.session(sessionId)).holders === 0);

          // The model asks for the command only now, with nobody connected.
          held.open();
          await w.waitFor("the agent asked", async () => (await w.questions(sessionId)).length === 1);
          const [question] = await w.questions(sessionId);
          const asked = question!.request as { toolCall: ToolCallUpdate; options: PermissionOption[] };
          expect(question).toMatchObject({ kind: "permission", state: "pending" });
          expect(existsSync(marker)).toBe(false);

          // A client that loads the session is sent the question…
          const second = await w.connect();
          await second.load(sessionId, w.cwd);
          await w.waitFor("the question reached the connected client", () => second.permissions.length === 1);
          expect(second.permissions[0]!.params.toolCall.toolCallId).toBe(asked.toolCall.toolCallId);

          // …and sees it withdrawn when it is answered over REST.
          const option = asked.options.find((o) => o.kind === agent.allowOnceOptionKind)!;
          const answered = await w.api<{ state: string }>(`/api/questions/${question!.id}/answer`, {
            method: "POST",
            body: JSON.stringify({ optionId: option.optionId }),
          });
          expect(answered.state).toBe("answered");
          await w.waitFor("the connected client's copy was withdrawn", () => second.permissions[0]!.signal.aborted);

          const ended = await w.waitForRecord("the turn ended", (r) => r.kind === "turn_ended" && r.sessionId === sessionId);
          expect(ended.record).toMatchObject({ stopReason: "end_turn", error: null });
          expect(readFileSync(marker, "utf8")).toBe("approved\n");
          await w.waitForText(second, sessionId, "The command ran.");
          const call = toolCalls(second, sessionId).find((c) => c.id === asked.toolCall.toolCallId);
          expect(call).toMatchObject({ status: "completed" });
          expect(call!.output).toContain("permission-output-7");
          expect(w.requestsOf(tag)[1]!.toolResults.at(-1)?.output).toContain("permission-output-7");
        },
      );
    });

    const longCall: Knobs = { releaseGrace: "500ms", idleTtl: "3s", sweepInterval: "100ms" };
    describe(`with a short idle TTL (${JSON.stringify(longCall)})`, () => {
      const world = useWorld(agent, sharedDataDir, { knobs: longCall });

      scenario(
        "long-call",
        "a tool call longer than the idle TTL keeps the location and the agent with no client attached; after it, the full idle TTL applies",
        async () => {
          const w = world();
          const idleTtl = ms(longCall.idleTtl!);
          const slept = join(w.cwd, "slept.txt");
          const tag = w.play([{ toolCalls: [agent.shellTool("sleep 6 && echo slept > slept.txt")] }, { text: "Slept." }]);
          const client = await w.connect();
          const sessionId = await client.newSession(w.cwd);
          void client.prompt(sessionId, `${tag} sleep a while`).catch(() => undefined);
          const { pid } = await w.session(sessionId);
          await w.waitFor("the agent runs the command", () => runningCommand(pid!, "sleep 6") !== undefined);
          w.watchProcesses(pid!);
          await client.close();

          // Past the idle TTL since the location's last activity, with no client, the command still running.
          await w.waitFor("the idle TTL passed since the location's last durable event", async () => {
            const location = await w.location();
            return location !== undefined && Date.now() > location.activeAt + idleTtl + 300;
          });
          expect(await w.location()).toMatchObject({ state: "retained", keptBy: "active-execution", activeSessions: [sessionId] });
          expect(await w.session(sessionId)).toMatchObject({ state: "live", pid, holders: 0, turnActive: true });
          expect(existsSync(slept)).toBe(false);

          // From the end of the command on, the location has a full idle TTL.
          let after: LocationView | undefined;
          await w.waitFor("the turn settled and the location is kept by its idle TTL", async () => {
            after = await w.location();
            if (after === undefined) throw new Error("the location was evicted before it was seen kept by its idle TTL");
            return after.keptBy === "idle-ttl";
          });
          const ended = await w.waitForRecord("the turn ended", (r) => r.kind === "turn_ended" && r.sessionId === sessionId);
          expect(ended.record).toMatchObject({ stopReason: "end_turn", error: null });
          expect(after!.activeSessions).toEqual([]);
          expect(after!.expiresAt - after!.activeAt).toBe(idleTtl);
          expect(after!.activeAt).toBeGreaterThanOrEqual(Math.floor(statSync(slept).mtimeMs));
          const evicted = await w.waitForRecord("the location was evicted", (r) => r.kind === "location_evicted" && r.directory === w.cwd);
          expect(evicted.record.reason).toBe("idle");
          expect(evicted.at).toBeGreaterThanOrEqual(after!.expiresAt);
          expect(w.requestsOf(tag)[1]!.toolResults).toHaveLength(1);
        },
      );
    });

    // The cap must exceed the agent's own silence before its first update (opencode: 3.4 s on a loaded
    // 2-core machine); the interrupt timeout leaves a slow machine's agent time to settle by itself.
    const cap: Knobs = { releaseGrace: "500ms", idleTtl: "1s", maxActiveHold: "10s", sweepInterval: "100ms", interruptTimeout: "30s" };
    describe(`with a short cap (${JSON.stringify(cap)})`, () => {
      const world = useWorld(agent, sharedDataDir, { knobs: cap });

      scenario(
        "cap",
        "the cap interrupts the agent silent in a tool call: the turn ends cancelled (inactivity), the agent settles, its process tree is gone, the session loads with its history",
        async () => {
          const w = world();
          const tag = w.play([{ text: "Waiting on a long command.", toolCalls: [agent.shellTool("sleep 97")] }]);
          const client = await w.connect();
          const sessionId = await client.newSession(w.cwd);
          let settled = false;
          const turn = client.prompt(sessionId, `${tag} wait for the long command`).finally(() => (settled = true));
          const { pid } = await w.session(sessionId);
          await w.waitFor("the agent runs the command", () => {
            if (settled) throw new Error(`the turn ended before the agent ran the command: its silence exceeded the cap (${cap.maxActiveHold})`);
            return runningCommand(pid!, "sleep 97") !== undefined;
          });
          const sleeper = runningCommand(pid!, "sleep 97")!;
          const tree = w.watchProcesses(pid!);
          expect(tree).toContain(sleeper);

          expect((await turn).stopReason).toBe("cancelled");
          const interrupted = await w.waitForRecord("the turn was interrupted", (r) => r.kind === "session_interrupted" && r.sessionId === sessionId);
          expect(interrupted.record.reason).toBe("inactivity");
          // The agent answered the cancel itself (it was not stopped as unresponsive).
          const ended = await w.waitForRecord("the turn ended", (r) => r.kind === "turn_ended" && r.sessionId === sessionId);
          expect(ended.record).toMatchObject({ stopReason: "cancelled", error: null });
          const evicted = await w.waitForRecord("the location was evicted", (r) => r.kind === "location_evicted" && r.directory === w.cwd);
          expect(evicted.record.reason).toBe("inactivity");
          expect(await waitUntilGone(tree, 15_000)).toEqual([]);
          const released = (await w.records()).filter((r) => r.record.kind === "child_released" && r.record.pid === pid);
          expect(released.map((r) => r.record.why)).not.toContain("unresponsive");

          const later = await w.connect();
          await later.load(sessionId, w.cwd);
          expect(later.texts(sessionId, "user_message_chunk")).toContain(tag);
          expect(later.texts(sessionId)).toContain("Waiting on a long command.");
          expect(toolUpdates(later, sessionId).some((u) => u.sessionUpdate === "tool_call")).toBe(true);
          expect((await w.session(sessionId)).pid).not.toBe(pid);
        },
      );
    });
  });
}
