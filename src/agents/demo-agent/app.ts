import { randomUUID } from "node:crypto";
import {
  agent,
  methods,
  PROTOCOL_VERSION,
  type AgentApp,
  type ContentBlock,
  type InitializeResponse,
  type McpServer,
  type NewSessionResponse,
} from "@agentclientprotocol/sdk";
import type { AgentCapabilities, PromptResponse } from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import { berthVersion } from "../../version.js";
import { AuthGate, demoAuthMethod, envAuthMethod } from "./auth.js";
import { announceCommandsAfterResponse } from "./commands/available-commands.js";
import { badAnswerLine } from "./commands/bad-answer.js";
import { runCommand } from "./commands/index.js";
import { ConversationStore } from "./conversation-store.js";
import { parsePromptCommand } from "./prompt-command.js";
import { listedSessions, type ListSessions } from "./listed-sessions.js";
import { replayConversation } from "./replay.js";
import { SessionRegistry, type DemoSession } from "./session-registry.js";
import { configOptionsOf, sessionStateFields, type SessionStateFields, withConfigValue, withMode, withModel } from "./session-state.js";
import { runTurn, Turn, type BusyPrompt, type ClientPeer } from "./turn.js";
import { UsageMeter } from "./usage.js";

export const demoAgentName = "berth-demo-agent";

/** Model selection is not in SDK 2.4.0's method table, so it is registered as a custom method. */
const setModelMethod = "session/set_model";
/** An extension request answered with its own params, to show `_` methods pass through. */
const echoExtensionMethod = "_berth-demo/echo";

const setModelParams = z.object({ sessionId: z.string(), modelId: z.string() });
/** In ACP's unstable schema, not in the SDK's stable method table. */
const forkMethod = "session/fork";
const forkParams = z.object({ sessionId: z.string(), cwd: z.string(), mcpServers: z.array(z.custom<McpServer>()).optional() });
const anyParams = (params: unknown): unknown => params;

export interface DemoAgentOptions {
  /** Where each session's conversation is kept, one JSON file per session. */
  stateDir: string;
  /** Advertise and serve `session/load` and `session/resume` (off for `--no-load`). */
  loadSessions: boolean;
  /** Announce a changed mode or option with an update, as most agents do (off for `--silent-settings`, as opencode). */
  announceSettings: boolean;
  /** Refuse `session/new`, `session/load` and `session/resume` until `authenticate` succeeded. */
  requireAuth: boolean;
  /** The agent's environment, where `authenticate` may find the token (see `tokenEnvNames`); none by default. */
  env?: Readonly<Record<string, string | undefined>>;
  /** What a prompt sent while a turn runs gets (`--busy-prompt`); refused by default. */
  busyPrompt?: BusyPrompt;
  /** How `session/list` answers (`--list-sessions`): with the stored conversations by default. */
  listSessions?: ListSessions;
  /** Writes a line on the agent's stdout as it is, outside the protocol (`/bad-answer`). */
  writeLine(line: string): void;
}

/**
 * The demo agent as an SDK app: deterministic, driven only by prompt text, and
 * advertising every ACP feature a proxy must carry through unchanged.
 * One app serves one connection (it remembers that client and its authentication).
 */
export function createDemoAgentApp(options: DemoAgentOptions): AgentApp {
  const store = new ConversationStore(options.stateDir);
  const sessions = new SessionRegistry(store);
  const auth = new AuthGate(options.requireAuth, options.env);
  let peer: ClientPeer = { info: null, capabilities: {} };
  const stateOf = (session: DemoSession, method: string): SessionStateFields => sessionStateFields(sessions.settingsOf(session), method);

  const app = agent({ name: demoAgentName })
    .onRequest(methods.agent.initialize, ({ params }) => {
      peer = { info: params.clientInfo ?? null, capabilities: params.clientCapabilities ?? {} };
      const response: InitializeResponse = {
        protocolVersion: PROTOCOL_VERSION,
        agentInfo: { name: demoAgentName, title: "Berth demo agent", version: berthVersion },
        agentCapabilities: capabilities(options.loadSessions),
        authMethods: [demoAuthMethod, envAuthMethod],
        _meta: { "berth-demo/initialize": true },
      };
      return response;
    })
    .onRequest(methods.agent.authenticate, ({ params }) => {
      auth.authenticate(params);
      return {};
    })
    .onRequest(methods.agent.session.new, ({ params, client }) => {
      auth.check();
      const session = sessions.create(params.cwd, params.mcpServers);
      announceCommandsAfterResponse(client, session.id);
      const response: NewSessionResponse = { sessionId: session.id, ...stateOf(session, methods.agent.session.new) };
      return response;
    })
    .onRequest(methods.agent.session.setMode, async ({ params, client }) => {
      const session = sessions.get(params.sessionId);
      sessions.changeSettings(session, withMode(sessions.settingsOf(session), params.modeId));
      if (options.announceSettings)
        await client.notify(methods.client.session.update, {
          sessionId: session.id,
          update: { sessionUpdate: "current_mode_update", currentModeId: params.modeId },
        });
      return {};
    })
    .onRequest(methods.agent.session.setConfigOption, async ({ params, client }) => {
      const session = sessions.get(params.sessionId);
      sessions.changeSettings(session, withConfigValue(sessions.settingsOf(session), params.configId, params.value));
      const configOptions = configOptionsOf(sessions.settingsOf(session));
      if (options.announceSettings)
        await client.notify(methods.client.session.update, {
          sessionId: session.id,
          update: { sessionUpdate: "config_option_update", configOptions },
        });
      return { configOptions };
    })
    .onRequest(setModelMethod, setModelParams, ({ params }) => {
      const session = sessions.get(params.sessionId);
      sessions.changeSettings(session, withModel(sessions.settingsOf(session), params.modelId));
      return {};
    })
    .onRequest(echoExtensionMethod, anyParams, ({ params }) => ({ echoed: params }))
    .onRequest(methods.agent.session.prompt, async ({ params, client, requestId }) => {
      const session = sessions.get(params.sessionId);
      const text = promptText(params.prompt);
      const command = parsePromptCommand(text);
      const meter = new UsageMeter(text);
      const stopReason = await runTurn(
        session,
        options.busyPrompt ?? "refuse",
        (cancelled) => new Turn(session, sessions, client, peer, meter, cancelled),
        (turn) => {
          turn.append({ kind: "user_message", messageId: randomUUID(), text });
          return runCommand(turn, command);
        },
      );
      const response: PromptResponse = {
        stopReason,
        usage: meter.usage(),
        _meta: { "berth-demo/prompt-meta": params._meta ?? null },
      };
      if (command.name !== "bad-answer") return response;
      options.writeLine(badAnswerLine(requestId, response, command.kind));
      // Its answer went out above: the SDK must never send one of its own.
      return new Promise<never>(() => undefined);
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      const session = sessions.get(params.sessionId);
      session.cancels++;
      if (session.turn.name === "running") session.turn.cancel.abort();
    })
    .onRequest(methods.agent.session.close, ({ params }) => {
      sessions.close(params.sessionId);
      return {};
    });

  if (options.loadSessions) {
    app
      .onRequest(methods.agent.session.load, async ({ params, client }) => {
        auth.check();
        const session = sessions.reopen(params.sessionId, params.cwd, params.mcpServers);
        await replayConversation(client, session.conversation);
        announceCommandsAfterResponse(client, session.id);
        return stateOf(session, methods.agent.session.load);
      })
      .onRequest(methods.agent.session.resume, ({ params }) => {
        auth.check();
        const session = sessions.reopen(params.sessionId, params.cwd, params.mcpServers ?? []);
        return stateOf(session, methods.agent.session.resume);
      })
      .onRequest(methods.agent.session.list, ({ params }) => listedSessions(store, params, options.listSessions ?? "serve"))
      // A fork is kept as any conversation is, so another process can load it (which is how Berth uses it).
      .onRequest(forkMethod, forkParams, ({ params }) => {
        auth.check();
        const session = sessions.fork(params.sessionId, params.cwd, params.mcpServers ?? []);
        return { sessionId: session.id, ...stateOf(session, forkMethod) };
      });
  }
  return app;
}

function capabilities(loadSessions: boolean): AgentCapabilities {
  return {
    loadSession: loadSessions,
    mcpCapabilities: { http: true },
    promptCapabilities: { image: true, embeddedContext: true },
    sessionCapabilities: loadSessions ? { resume: {}, close: {}, list: {}, fork: {} } : { close: {} },
    _meta: { "berth-demo/capabilities": true },
  };
}

/** The prompt's text blocks; other content does not steer the demo agent. */
function promptText(prompt: ContentBlock[]): string {
  return prompt.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
}
