import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { ticketUrl } from "./token.js";

type AcpStream = ReturnType<typeof createWebSocketStream>;

/**
 * An ACP stream over a WebSocket to `path` that opens once a ticket is in hand (a ticket takes a
 * request first, and the SDK's stream wants its URL at once). Messages written meanwhile wait;
 * if no ticket comes, the stream fails and the connection closes.
 */
export function ticketedWebSocketStream(path: string): AcpStream {
  const inbound = new TransformStream();
  const outbound = new TransformStream();
  ticketUrl(path, "ws").then(
    (url) => {
      const socket = createWebSocketStream(url);
      void socket.readable.pipeTo(inbound.writable).catch(() => undefined);
      void outbound.readable.pipeTo(socket.writable).catch(() => undefined);
    },
    (error: unknown) => {
      void inbound.writable.abort(error).catch(() => undefined);
      void outbound.readable.cancel(error).catch(() => undefined);
    },
  );
  return { readable: inbound.readable, writable: outbound.writable } as AcpStream;
}
