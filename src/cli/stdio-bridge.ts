import { Readable, Writable } from "node:stream";
import { ndJsonStream, type AnyMessage } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";

export interface BridgeOptions {
  /** `ws://127.0.0.1:7420/acp` */
  readonly url: string;
  readonly token: string;
  /** Injected as `_meta["berth/agent"]` into `session/new` requests that name no agent. */
  readonly agent?: string;
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
}

/**
 * `berth connect`: an editor that launches ACP agents as commands talks ndjson on our stdio;
 * we relay every message to Berth's `/acp` WebSocket and back. Closing the editor closes the
 * socket, which releases this connection's holds: the agent stays warm for the grace.
 */
export async function bridgeStdio(options: BridgeOptions): Promise<void> {
  const local = ndJsonStream(
    Writable.toWeb(options.output as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(options.input as Readable) as ReadableStream<Uint8Array>,
  );
  const remote = createWebSocketStream(options.url, {
    WebSocket: WebSocket as never,
    headers: { authorization: `Bearer ${options.token}` },
  });
  const withAgent = new TransformStream<AnyMessage, AnyMessage>({
    transform: (message, controller) => controller.enqueue(options.agent ? chooseAgent(message, options.agent) : message),
  });
  // Whichever side ends first ends the bridge.
  await Promise.race([
    local.readable.pipeThrough(withAgent).pipeTo(remote.writable),
    remote.readable.pipeTo(local.writable),
  ]).finally(() => {
    void remote.writable.abort().catch(() => undefined);
    void local.writable.abort().catch(() => undefined);
  });
}

function chooseAgent(message: AnyMessage, agent: string): AnyMessage {
  if (!("method" in message) || message.method !== "session/new" || !("id" in message)) return message;
  const params = (message.params ?? {}) as { _meta?: Record<string, unknown> };
  if (params._meta?.["berth/agent"] !== undefined) return message;
  return { ...message, params: { ...params, _meta: { ...params._meta, "berth/agent": agent } } };
}
