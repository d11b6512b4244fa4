import { methods, type AgentContext, type AvailableCommand } from "@agentclientprotocol/sdk";
import { promptCommandHelp } from "../prompt-command.js";

const availableCommands: AvailableCommand[] = Object.entries(promptCommandHelp).map(([name, { hint, description }]) => ({
  name,
  description,
  ...(hint ? { input: { hint } } : {}),
}));

/**
 * Sends `available_commands_update` once the current response has gone out:
 * before it, a client of `session/new` would not yet know the session id.
 */
export function announceCommandsAfterResponse(client: AgentContext, sessionId: string): void {
  setImmediate(() => {
    // Only a closed connection makes this fail, and then nobody is left to tell.
    client
      .notify(methods.client.session.update, {
        sessionId,
        update: { sessionUpdate: "available_commands_update", availableCommands },
      })
      .catch(() => undefined);
  });
}
