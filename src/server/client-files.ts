import { methods, type AgentContext, type ClientCapabilities } from "@agentclientprotocol/sdk";
import type { ClientFiles } from "../host/views.js";

/**
 * A client's own file access as it declared it (`clientCapabilities.fs`): what answers the agent's `fs/*` while a
 * turn it prompted runs, before the disk (docs/api.md). Undefined for a client that declared neither method.
 */
export function clientFilesOf(capabilities: ClientCapabilities, client: AgentContext): ClientFiles | undefined {
  const readTextFile = capabilities.fs?.readTextFile === true;
  const writeTextFile = capabilities.fs?.writeTextFile === true;
  if (!readTextFile && !writeTextFile) return undefined;
  // Withdrawn with `$/cancel_request` once the disk answers instead; a late answer is dropped.
  const options = (signal: AbortSignal) => ({ cancellationSignal: signal, stopWaitingOnCancel: true });
  return {
    readTextFile,
    writeTextFile,
    read: (params, signal) => client.request(methods.client.fs.readTextFile, params, options(signal)),
    write: (params, signal) => client.request(methods.client.fs.writeTextFile, params, options(signal)),
  };
}
