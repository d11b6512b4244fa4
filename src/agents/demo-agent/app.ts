import { randomUUID } from "node:crypto";
import {
  agent,
  methods,
  PROTOCOL_VERSION,
  type AgentApp,
  type AgentCapabilities,
  type ClientCapabilities,
  type ContentBlock,
} from "@agentclientprotocol/sdk";
import { berthVersion } from "../../version.js";
import { runCommand } from "./commands/index.js";
import { ConversationStore } from "./conversation-store.js";
import { parsePromptCommand } from "./prompt-command.js";
import { replayConversation } from "./replay.js";
import { SessionRegistry } from "./session-registry.js";
import { runTurn, Turn } from "./turn.js";

export const demoAgentName = "berth-demo-agent";

export interface DemoAgentOptions {
  /** Where each session's conversation is kept, one JSON file per session. */
  stateDir: string;
  /** Advertise and serve `session/load` and `session/resume` (off for `--no-load`). */
  loadSessions: boolean;
}

/**
 * The demo agent as an SDK app: deterministic, driven only by prompt text.
 * One app serves one connection (it remembers that client's capabilities).
 */
export function createDemoAgentApp(options: DemoAgentOptions): AgentApp {
  const sessions = new SessionRegistry(new ConversationStore(options.stateDir));
  let clientCapabilities: ClientCapabilities = {};

  const app = agent({ name: demoAgentName })
    .onRequest(methods.agent.initialize, ({ params }) => {
      clientCapabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentInfo: { name: demoAgentName, title: "Berth demo agent", version: berthVersion },
        agentCapabilities: capabilities(options.loadSessions),
      };
    })
    .onRequest(methods.agent.session.new, ({ params }) => ({
      sessionId: sessions.create(params.cwd, params.mcpServers).id,
    }))
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      const session = sessions.get(params.sessionId);
      const text = promptText(params.prompt);
      const stopReason = await runTurn(
        session,
        (cancelled) => new Turn(session, sessions, client, clientCapabilities, cancelled),
        (turn) => {
          turn.record({ kind: "user_message", messageId: randomUUID(), text });
          return runCommand(turn, parsePromptCommand(text));
        },
      );
      return { stopReason };
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (session.turn.name === "running") session.turn.cancel.abort();
    })
    .onRequest(methods.agent.session.close, ({ params }) => {
      sessions.close(params.sessionId);
      return {};
    });

  if (options.loadSessions) {
    app
      .onRequest(methods.agent.session.load, async ({ params, client }) => {
        const session = sessions.reopen(params.sessionId, params.cwd, params.mcpServers);
        await replayConversation(client, session.conversation);
        return {};
      })
      .onRequest(methods.agent.session.resume, ({ params }) => {
        sessions.reopen(params.sessionId, params.cwd, params.mcpServers ?? []);
        return {};
      });
  }
  return app;
}

function capabilities(loadSessions: boolean): AgentCapabilities {
  return {
    loadSession: loadSessions,
    mcpCapabilities: { http: true },
    sessionCapabilities: loadSessions ? { resume: {}, close: {} } : { close: {} },
  };
}

/** The prompt's text blocks; other content does not steer the demo agent. */
function promptText(prompt: ContentBlock[]): string {
  return prompt
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");
}
