import type { WebSocket } from "ws";

/** How often a WebSocket's far end is pinged; no pong by the next ping ends the connection. */
export const PING_INTERVAL_MS = 5_000;

/**
 * Pings `socket` every {@link PING_INTERVAL_MS} and ends it (after `onSilent`) when the far end answered none
 * since the last: a paused host or a silent partition never leaves a connection, nor what it holds, behind.
 * A ping still queued behind unsent data it cannot have answered: while those bytes keep leaving, the
 * far end is alive, only slow (it is cut for being too far behind elsewhere, not here). A tick that comes
 * late (this process was paused, or its event loop blocked) judges nothing: the pong may be unread yet;
 * nor does one while `readsHeld()` says this end holds its reads back on purpose (a relay whose client is behind).
 */
export function keepAlive(socket: WebSocket, onSilent: () => void, readsHeld: () => boolean = () => false): void {
  let answered = true;
  let flushed = bytesFlushed(socket);
  let ticked = performance.now();
  socket.on("pong", () => {
    answered = true;
  });
  const pinger = setInterval(() => {
    const draining = socket.bufferedAmount > 0 && bytesFlushed(socket) > flushed;
    const late = performance.now() - ticked > PING_INTERVAL_MS * 1.5;
    flushed = bytesFlushed(socket);
    ticked = performance.now();
    if (!answered && !draining && !late && !readsHeld()) {
      onSilent();
      socket.terminate();
      return;
    }
    answered = false;
    socket.ping();
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
