import { Readable, Writable } from "node:stream";
import { ndJsonStream, type AnyMessage } from "@agentclientprotocol/sdk";
import { createWebSocketStream, type WebSocketConstructor } from "@agentclientprotocol/sdk/experimental/ws-client";
import type { WebSocket } from "ws";
import { openAcpSocket } from "./acp-socket.js";
import { refuseFirstRequest } from "./first-request-refusal.js";
import { HostClientError } from "./host-client.js";
import { LoginEnv } from "./login-env.js";

export interface BridgeOptions {
  /** `ws://127.0.0.1:7420/acp` */
  readonly url: string;
  readonly token: string;
  /** The agent this connection speaks for (`/acp?agent=ID`); the host's default when absent. */
  readonly agent?: string;
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  /** Where an environment-variable auth method's values are found (the bridge's own environment). */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * `berth connect`: an editor that launches ACP agents as commands talks ndjson on our stdio;
 * we relay every message to Berth's `/acp` WebSocket and back. Closing the editor closes the
 * socket, which releases this connection's holds: the agent stays warm for the grace.
 */
export async function bridgeStdio(options: BridgeOptions): Promise<void> {
  const url = new URL(options.url);
  if (options.agent !== undefined) url.searchParams.set("agent", options.agent);
  // Opened before stdio is touched: a host that is absent or refuses ends the bridge with one line, which the editor's
  // `initialize` gets too.
  const socket = await openAcpSocket(url.href, options.token).catch(async (error: unknown) => {
    // A person at a terminal sends no `initialize`: the line on stderr is for them.
    const editor = !(options.input as NodeJS.ReadStream).isTTY;
    if (editor && error instanceof HostClientError)
      await refuseFirstRequest(stdioStream(options), error.message, { url: `${url.origin}${url.pathname}` });
    throw error;
  });
  const remote = createWebSocketStream(url.href, { WebSocket: alreadyOpen(socket) });
  const local = stdioStream(options);
  const logins = new LoginEnv(options.env ?? process.env);
  const through = (map: (message: AnyMessage) => AnyMessage) =>
    new TransformStream<AnyMessage, AnyMessage>({ transform: (message, out) => out.enqueue(map(message)) });
  // Whichever side ends first ends the bridge.
  await Promise.race([
    local.readable.pipeThrough(through((m) => logins.outgoing(m))).pipeTo(remote.writable),
    remote.readable.pipeThrough(through((m) => logins.incoming(m))).pipeTo(local.writable),
  ]).finally(() => {
    void remote.writable.abort().catch(() => undefined);
    void local.writable.abort().catch(() => undefined);
  });
}

/** The editor's side: ndjson on the bridge's stdio. */
function stdioStream({ input, output }: Pick<BridgeOptions, "input" | "output">) {
  return ndJsonStream(
    Writable.toWeb(output as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(input as Readable) as ReadableStream<Uint8Array>,
  );
}

/** The SDK's stream builds its own socket; a constructor may hand back one that already exists. */
function alreadyOpen(socket: WebSocket): WebSocketConstructor {
  return function AlreadyOpen() {
    return socket;
  } as unknown as WebSocketConstructor;
}
