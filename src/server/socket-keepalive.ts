import type { WebSocket } from "ws";

/** How often a WebSocket's far end is pinged; no pong by the next ping ends the connection. */
export const PING_INTERVAL_MS = 5_000;

/**
 * Pings `socket` every {@link PING_INTERVAL_MS} and ends it (after `onSilent`) when the far end answered none
 * since the last: a paused host or a silent partition never leaves a connection, nor what it holds, behind.
 * A ping behind data it cannot have answered yet: while data keeps leaving (handed to the kernel since the last
 * ping), the far end is alive, only slow. The data may wait in this end's queue or already in the kernel's
 * buffers (tens of megabytes on loopback) after a stream ended: a ping behind it is answered only once the far
 * end read it all, and the far end gets until the tick after the last data left. A tick that comes
 * late (this process was paused, or its event loop blocked) judges nothing: the pong may be unread yet;
 * nor does one while `readsHeld()` says this end holds its reads back on purpose (a relay whose client is behind).
 */
export function keepAlive(socket: WebSocket, onSilent: () => void, readsHeld: () => boolean = () => false): void {
  let answered = true;
  /** What had left when the last ping was sent (the ping itself, if it left at once, included). */
  let flushed = bytesFlushed(socket);
  let ticked = performance.now();
  socket.on("pong", () => {
    answered = true;
  });
  const pinger = setInterval(() => {
    const draining = bytesFlushed(socket) > flushed;
    const late = performance.now() - ticked > PING_INTERVAL_MS * 1.5;
    ticked = performance.now();
    if (!answered && !draining && !late && !readsHeld()) {
      onSilent();
      socket.terminate();
      return;
    }
    answered = false;
    socket.ping();
    flushed = bytesFlushed(socket);
  }, PING_INTERVAL_MS);
  pinger.unref();
  socket.once("close", () => clearInterval(pinger));
}

/**
 * What the TCP socket under `socket` (ws's `_socket`) handed to the kernel so far: its `bytesWritten` counts what is
 * still queued too (a queued ping would look like data leaving), so the queue is taken off.
 */
function bytesFlushed(socket: WebSocket): number {
  const tcp = (socket as unknown as { _socket?: { bytesWritten?: number; writableLength?: number } })._socket;
  return (tcp?.bytesWritten ?? 0) - (tcp?.writableLength ?? 0);
}
