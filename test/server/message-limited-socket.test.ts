import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { MessageLimitedSocket } from "../../src/server/message-limited-socket.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A server-side socket wrapped as Berth wraps it, and the client at the other end (not reading). */
async function pair(limits: { maxBufferedBytes: number; drainTimeoutMs?: number }) {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  closers.push(() => new Promise((resolve) => wss.close(() => resolve())));
  await new Promise((resolve) => wss.once("listening", resolve));
  const accepted = new Promise<WebSocket>((resolve) => wss.once("connection", resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  closers.push(async () => client.terminate());
  await new Promise((resolve) => client.once("open", resolve));
  const server = await accepted;
  const stalls: number[] = [];
  const socket = new MessageLimitedSocket(
    server,
    { maxMessageBytes: 1024 * 1024, ...limits },
    () => undefined,
    (buffered) => stalls.push(buffered),
    () => undefined,
  );
  const tcp = (client as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  tcp.pause();
  return { socket, server, client, tcp, stalls };
}

/** Notifies until the socket answers that the client is behind; the promise it answered. */
function fillUntilBehind(socket: MessageLimitedSocket): Promise<void> {
  const chunk = "x".repeat(64 * 1024);
  for (let sent = 0; sent < 10_000; sent++) {
    const behind = socket.notify("session/update", { chunk });
    if (behind) return behind;
  }
  throw new Error("the client never fell behind");
}

describe("MessageLimitedSocket.notify for a client that stopped reading", () => {
  it("lets a sender wait while the client is behind, and cuts the client once it read nothing for the drain timeout", async () => {
    const { socket, server, stalls } = await pair({ maxBufferedBytes: 1024 * 1024, drainTimeoutMs: 200 });
    const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
    // A replay: send until behind, wait until caught up, again. The kernel's socket buffers take
    // a few megabytes; once they are full nothing drains any more, and the wait ends in the cut.
    let waits = 0;
    while (server.readyState === WebSocket.OPEN) {
      await fillUntilBehind(socket);
      waits++;
    }
    await closed;
    expect(waits).toBeGreaterThan(1);
    expect(stalls).toHaveLength(1);
    // The live path's own limit never tripped: the sender waited each time it was behind.
    expect(stalls[0]).toBeLessThanOrEqual(1024 * 1024);
  });
});
