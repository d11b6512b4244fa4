import { spawn } from "node:child_process";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { WebSocket, WebSocketServer } from "ws";

/** The size of a relayed `/flood … 256` line as an agent writes it (its JSON-RPC envelope around 256 B of text). */
export const LINE_BYTES = 498;
const LINES = 200_000;

/**
 * Lines per second a child process's stdout carries to Node with nothing else done to them: the ceiling of any agent
 * relay on this machine. The child writes as fast as its pipe takes; the parent splits lines, as an ACP reader does.
 */
export async function rawPipeLinesPerSecond(): Promise<number> {
  const writer = `const line = "x".repeat(${LINE_BYTES - 1}) + "\\n"; const block = line.repeat(64);
    let left = ${LINES / 64}; const out = process.stdout;
    const more = () => { while (left > 0) { left--; if (!out.write(block)) { out.once("drain", more); return; } } };
    more();`;
  const child = spawn(process.execPath, ["-e", writer], { stdio: ["ignore", "pipe", "inherit"], detached: true });
  let lines = 0;
  let start = 0;
  const reader = createInterface({ input: child.stdout! });
  reader.on("line", () => {
    if (lines++ === 0) start = performance.now();
  });
  await once(reader, "close");
  const seconds = (performance.now() - start) / 1000;
  if (lines !== LINES) throw new Error(`the pipe carried ${lines} of ${LINES} lines`);
  return (lines - 1) / seconds;
}

/** Messages per second one loopback WebSocket carries when its sender corks each batch: the ceiling of a client's link. */
export async function loopbackWebSocketMessagesPerSecond(): Promise<number> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await once(server, "listening");
  const message = "x".repeat(LINE_BYTES);
  server.on("connection", (socket) => {
    const tcp = (socket as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
    let left = LINES;
    const batch = () => {
      tcp.cork();
      for (let i = 0; i < 256 && left > 0; i++, left--) socket.send(message);
      tcp.uncork();
      if (left > 0) setImmediate(batch);
    };
    batch();
  });
  try {
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    let received = 0;
    let start = 0;
    await new Promise<void>((resolve, reject) => {
      client.on("message", () => {
        if (received++ === 0) start = performance.now();
        if (received === LINES) resolve();
      });
      client.once("error", reject);
    });
    const seconds = (performance.now() - start) / 1000;
    client.close();
    return (received - 1) / seconds;
  } finally {
    for (const socket of server.clients) socket.terminate();
    server.close();
  }
}
