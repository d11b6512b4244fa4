import { EventEmitter } from "node:events";
import type { WebSocket } from "ws";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { keepAlive, PING_INTERVAL_MS } from "../../src/server/socket-keepalive.js";

/** What keepAlive uses of a `ws` socket: pings out, pongs in, what waits to be sent and what the TCP socket took. */
class SocketDouble extends EventEmitter {
  bufferedAmount = 0;
  /** Node counts what is still queued in `bytesWritten` too; `writableLength` is that queue. */
  readonly _socket = { bytesWritten: 0, writableLength: 0 };
  pings = 0;
  terminated = false;
  /** Whether the far end answers each ping (at once, as a live peer's `ws` does). */
  answers = true;

  ping(): void {
    this.pings += 1;
    // Behind unsent data, the ping frame waits in the queue like the data; else the kernel takes it at once.
    this._socket.bytesWritten += 2;
    if (this.bufferedAmount > 0) this._socket.writableLength += 2;
    if (this.answers) queueMicrotask(() => this.emit("pong"));
  }

  terminate(): void {
    this.terminated = true;
    this.emit("close");
  }
}

describe("the WebSocket keep-alive", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const watched = () => {
    const socket = new SocketDouble();
    const silent = vi.fn();
    keepAlive(socket as unknown as WebSocket, silent);
    return { socket, silent };
  };

  it("keeps a far end that answers every ping", async () => {
    const { socket, silent } = watched();
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS * 10);
    expect(socket.pings).toBe(10);
    expect(socket.terminated).toBe(false);
    expect(silent).not.toHaveBeenCalled();
  });

  it("ends one that answered no ping by the next, and pings it no more", async () => {
    const { socket, silent } = watched();
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS * 2);
    socket.answers = false;
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS);
    expect(socket.terminated).toBe(false);
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS);
    expect(socket.terminated).toBe(true);
    expect(silent).toHaveBeenCalledOnce();
    const pings = socket.pings;
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS * 3);
    expect(socket.pings).toBe(pings);
  });

  it("keeps a slow far end while the data its ping waits behind keeps leaving, and ends it once nothing leaves", async () => {
    const { socket, silent } = watched();
    socket.answers = false;
    socket.bufferedAmount = 1_000_000;
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS);
    for (let tick = 0; tick < 5; tick++) {
      socket._socket.bytesWritten += 64 * 1024;
      await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS);
    }
    expect(socket.terminated).toBe(false);
    // Nothing leaves any more (the pings queued behind the data are not data leaving): the far end is gone, not slow.
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS * 2);
    expect(socket.terminated).toBe(true);
    expect(silent).toHaveBeenCalledOnce();
  });

  it("keeps a slow far end while the data a stream left in the kernel's buffers is read (nothing queued here any more), and ends it once nothing more leaves", async () => {
    const { socket, silent } = watched();
    socket.answers = false;
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS);
    // The stream's last data left for the kernel after that ping: nothing waits in this end's queue.
    socket._socket.bytesWritten += 4 * 1024 * 1024;
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS);
    expect(socket.terminated).toBe(false);
    // Nothing left since the last ping, which is unanswered: the far end read nothing of it in a whole interval.
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS);
    expect(socket.terminated).toBe(true);
    expect(silent).toHaveBeenCalledOnce();
  });

  it("judges nothing on a tick that comes late (this process was paused): the pong may be unread yet", async () => {
    const { socket, silent } = watched();
    socket.answers = false;
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS);
    // Paused for a minute after that ping: the clock moved on, and the timer fires only when the process wakes, before
    // the pong that waits in the socket is read.
    const now = performance.now.bind(performance);
    vi.spyOn(performance, "now").mockImplementation(() => now() + 60_000);
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS);
    expect(socket.terminated).toBe(false);
    socket.emit("pong");
    socket.answers = true;
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS * 3);
    expect(socket.terminated).toBe(false);
    expect(silent).not.toHaveBeenCalled();
  });

  it("judges nothing while this end holds its reads back on purpose, and ends a silent far end once it reads again", async () => {
    const socket = new SocketDouble();
    const silent = vi.fn();
    let held = true;
    keepAlive(socket as unknown as WebSocket, silent, () => held);
    // A relay whose client is behind reads nothing from the owner: the owner's pongs wait unread.
    socket.answers = false;
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS * 4);
    expect(socket.terminated).toBe(false);
    held = false;
    await vi.advanceTimersByTimeAsync(PING_INTERVAL_MS * 2);
    expect(socket.terminated).toBe(true);
    expect(silent).toHaveBeenCalledOnce();
  });
});
