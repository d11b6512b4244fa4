import { client, methods, RequestError, type ClientCapabilities, type Stream } from "@agentclientprotocol/sdk";
import { join } from "node:path";
import { berthClientCapabilities } from "../../src/agents/agent-child.js";

/** One step of the script and what the client got for it: an answer, or an error with its code and data. */
interface StepOutcome {
  readonly step: string;
  readonly result?: unknown;
  readonly error?: { code: number; message: string; data?: unknown };
}

/** Everything a client received while it ran the script. */
export interface ClientTranscript {
  readonly steps: StepOutcome[];
  /** `session/update` notifications, in order. */
  readonly updates: unknown[];
  /** Requests and notifications the agent sent that are neither updates nor questions (extensions). */
  readonly extensions: Array<{ method: string; params: unknown }>;
  /** Permission requests the agent asked, answered with their first option. */
  readonly permissions: unknown[];
  /** The agent's `fs/*` requests, answered by the client as an editor would. */
  readonly fileRequests: Array<{ method: string; params: unknown }>;
  /** What a second connection got that logged in, loaded the session and listed the sessions of its `cwd`. */
  reopened?: ReopenedTranscript;
}

/** Issue 25's items 5 and 7, on a connection of their own. */
interface ReopenedTranscript {
  readonly steps: StepOutcome[];
  readonly updates: unknown[];
}

/** What the script needs from whoever runs it, to know when the agent has what the client sent. */
export interface ScriptHooks {
  /** Resolves once the agent process received a `session/prompt` with this text. */
  readonly agentReceivedPrompt: (text: string) => Promise<void>;
  /** A new connection to the same place: directly a new agent process on the same state, through Berth a new client. */
  readonly connectAgain: () => Stream;
}

/**
 * The same capabilities Berth advertises to agents, so what an agent reads from its client is
 * the same directly and through Berth (Berth serves files, terminals and terminal logins itself).
 */
const clientCapabilities: ClientCapabilities = berthClientCapabilities;
const clientInfo = { name: "differential-client", title: "Differential client", version: "1.0.0" };

/**
 * The client messages of the differential test, run against whatever `stream` reaches: the agent
 * itself over stdio, or Berth over any of its transports. Every row of issue 8's list is a step:
 * `initialize` (`_meta`, client info), auth-required errors, `authenticate`, `session/new` (`_meta`,
 * modes, models, options), `set_mode`/`set_config_option`/`set_model`, prompts with `_meta` and
 * `usage`, extension requests and notifications both ways, and an agent error with code and data.
 * And issue 25's: a prompt sent while a turn runs, a terminal the agent embeds (the client declares
 * `_meta.terminal_output`, as Berth does), the agent's `fs/*` put to the client that declared fs, and a
 * `session/fork` whose fork is then prompted; then a new connection loads the session and lists its `cwd`'s sessions.
 */
export async function runClientScript(stream: Stream, cwd: string, hooks: ScriptHooks): Promise<ClientTranscript> {
  const transcript: ClientTranscript = { steps: [], updates: [], extensions: [], permissions: [], fileRequests: [] };
  // A question held unanswered keeps its turn running, for a prompt sent during the turn.
  let heldQuestion: { asked: () => void; released: Promise<void> } | undefined;
  const app = client({ name: "differential-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      transcript.updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      transcript.permissions.push(params);
      if (heldQuestion) {
        heldQuestion.asked();
        await heldQuestion.released;
      }
      return { outcome: { outcome: "selected", optionId: params.options[0]!.optionId } };
    })
    .onRequest(methods.client.fs.readTextFile, ({ method, params }) => {
      transcript.fileRequests.push({ method, params });
      return { content: "in the editor's unsaved buffer\n" };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ method, params }) => {
      transcript.fileRequests.push({ method, params });
      return {};
    })
    .onRequest("*", ({ method, params }) => {
      transcript.extensions.push({ method, params });
      return { answeredBy: "differential-client", params };
    })
    .onNotification("*", ({ method, params }) => {
      transcript.extensions.push({ method, params });
    });
  const connection = app.connect(stream);
  const agent = connection.agent;
  const step = stepper(transcript.steps);
  const request = (method: string, params: unknown) => agent.request<unknown>(method, params);
  let sessionId: string | undefined;
  try {
    await step("initialize", () => request("initialize", initializeParams));
    await step("session/new before authenticate", () => request("session/new", { cwd, mcpServers: [] }));
    await step("authenticate", () => request("authenticate", authenticateParams));
    const created = (await step("session/new", () => request("session/new", { cwd, mcpServers: [], _meta: { "differential/new": 2 } }))) as {
      sessionId: string;
    };
    sessionId = created.sessionId;
    const prompt = (text: string, meta?: Record<string, unknown>) =>
      request("session/prompt", { sessionId, prompt: [{ type: "text", text }], ...(meta ? { _meta: meta } : {}) });
    await step("session/set_mode", () => request("session/set_mode", { sessionId, modeId: "code" }));
    await step("session/set_config_option", () => request("session/set_config_option", { sessionId, configId: "verbosity", value: "terse" }));
    await step("session/set_model", () => request("session/set_model", { sessionId, modelId: "demo-large" }));
    await step("session/set_mode unknown", () => request("session/set_mode", { sessionId, modeId: "nonsense" }));
    await step("prompt with _meta", () => prompt("hello", { "differential/prompt": 3 }));
    await step("prompt /mode", () => prompt("/mode"));
    await step("prompt /whoami", () => prompt("/whoami"));
    await step("extension request", () => request("_berth-demo/echo", { sessionId, x: 1, _meta: { "differential/ext": 4 } }));
    await step("unknown extension request", () => request("_berth-demo/nothing", { sessionId }));
    await agent.notify("_berth-demo/ping", { sessionId, n: 5 });
    await step("agent's extension request", () => prompt('/ext _differential/ask {"q":42}'));
    await step("agent's extension notification", () => prompt('/extnotify _differential/note {"n":7}'));
    await step("permission", () => prompt("/ask Deploy to production?"));
    await step("agent error", () => prompt("/fail -32042 boom"));
    await step("after the error", () => prompt("/mode"));
    await step("embedded terminal", () => prompt("/embed total 0"));
    await step("agent reads a file", () => prompt(`/read ${join(cwd, "notes.txt")}`));
    await step("agent writes a file", () => prompt(`/write ${join(cwd, "todo.md")} ship it`));
    // The first prompt's question stays unanswered until the agent has the second prompt: it came during the turn.
    let asked!: () => void;
    const questionAsked = new Promise<void>((resolve) => (asked = resolve));
    let release!: () => void;
    heldQuestion = { asked, released: new Promise<void>((resolve) => (release = resolve)) };
    const first = step("prompt during a turn: the running one", () => prompt("/ask Keep going?"));
    await questionAsked;
    const second = step("prompt during a turn: the one sent meanwhile", () => prompt("meanwhile"));
    await hooks.agentReceivedPrompt("meanwhile");
    heldQuestion = undefined;
    release();
    await Promise.all([first, second]);
    // Issue 25's item 6: a fork of the session answers, and remembers the conversation so far.
    const forked = (await step("session/fork", () => request("session/fork", { sessionId, cwd, mcpServers: [] }))) as
      | { sessionId: string }
      | undefined;
    if (forked) {
      await step("prompt the fork /history", () =>
        request("session/prompt", { sessionId: forked.sessionId, prompt: [{ type: "text", text: "/history" }] }),
      );
    }
  } finally {
    connection.close();
  }
  transcript.reopened = await reopen(hooks.connectAgain(), cwd, sessionId);
  return transcript;
}

const initializeParams = { protocolVersion: 1, clientCapabilities, clientInfo, _meta: { "differential/initialize": 1 } };
const authenticateParams = { methodId: "demo-token", _meta: { "berth-demo/token": "s3cret" } };

/** Runs a step, keeping its answer or its JSON-RPC error in `steps`. */
function stepper(steps: StepOutcome[]): (name: string, run: () => Promise<unknown>) => Promise<unknown> {
  return async (name, run) => {
    try {
      const result = await run();
      steps.push({ step: name, result });
      return result;
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      steps.push({ step: name, error: { code: error.code, message: error.message, data: error.data } });
      return undefined;
    }
  };
}

/** Issue 25's items 5 and 7: a new connection loads the session (told the agent's commands once), then lists `cwd`'s sessions. */
async function reopen(stream: Stream, cwd: string, sessionId: string): Promise<ReopenedTranscript> {
  const transcript: ReopenedTranscript = { steps: [], updates: [] };
  const connection = client({ name: "differential-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      transcript.updates.push(params);
    })
    .connect(stream);
  const step = stepper(transcript.steps);
  const request = (method: string, params: unknown) => connection.agent.request<unknown>(method, params);
  try {
    await step("initialize", () => request("initialize", initializeParams));
    await step("authenticate", () => request("authenticate", authenticateParams));
    await step("session/load", () => request("session/load", { sessionId, cwd, mcpServers: [] }));
    await step("session/list", () => request("session/list", { cwd }));
  } finally {
    connection.close();
  }
  return transcript;
}
