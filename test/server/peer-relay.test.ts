// The relay's hold on an owner's connection (docs/fleet.md, "Backpressure across the relay"): while its client is
// behind, the relaying host reads nothing more from the owner, a moment at a time, so the owner's pings are still
// read and answered. The owner here is a loopback WebSocket server that answers `initialize`, streams notifications
// as fast as it can and pings every 100 ms, counting the pongs.
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { silentLogger } from "../../src/host/logger.js";
import { ClusterSecret } from "../../src/server/cluster-secret.js";
import { PeerRelay } from "../../src/server/peer-relay.js";
import { waitUntil } from "../support/process-table.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An owner host's ACP endpoint, as far as the relay's connection sees it. */
async function streamingOwner() {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const seen = { pongs: [] as number[], sent: 0 };
  server.on("connection", (socket: WebSocket) => {
    socket.on("pong", () => seen.pongs.push(performance.now()));
    const pinger = setInterval(() => socket.ping(), 100);
    let streaming: NodeJS.Timeout | undefined;
    socket.on("message", (data) => {
      const message = JSON.parse(data.toString()) as { id?: number; method?: string };
      if (message.method !== "initialize") return;
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: 1, agentCapabilities: {} } }));
      // Ten 1 kB updates every 10 ms, for as long as the connection lasts.
      streaming = setInterval(() => {
        for (let i = 0; i < 10; i++) {
          seen.sent++;
          socket.send(
            JSON.stringify({
              jsonrpc: "2.0",
              method: "session/update",
              params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x".repeat(1024) } } },
            }),
          );
        }
      }, 10);
    });
    socket.on("close", () => {
      clearInterval(pinger);
      clearInterval(streaming);
    });
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe("the relay's connection to an owner, while its client is behind", () => {
  it("reads from the owner a moment at a time only: the owner's pings are answered, and what it sends is not all taken in", async () => {
    const owner = await streamingOwner();
    let passedOn = 0;
    const relay = new PeerRelay({
      cluster: new ClusterSecret("peer-relay-test-secret-0123456789", "host-b"),
      agentId: undefined,
      log: silentLogger(),
      // A client that never catches up.
      notify: () => {
        passedOn++;
        return new Promise<void>(() => undefined);
      },
      ask: () => Promise.reject(new Error("no client requests in this test")),
    });
    cleanups.push(() => relay.close());
    // Opening the connection (`initialize`) is enough: the owner streams from then on.
    void relay.notify({ id: "host-a", url: owner.url }, "session/cancel", { sessionId: "s" }).catch(() => undefined);
    await waitUntil(() => passedOn > 0, "the relay passed a first update on");
    const behindSince = performance.now();
    // Later than one hold: a relay that held its reads until the client caught up would answer no ping any more.
    await waitUntil(() => owner.seen.pongs.some((at) => at > behindSince + 2_500), "the owner's pings are answered while the client is behind");
    // Held back all the same: far less was passed on than the owner sent.
    expect(passedOn).toBeLessThan(owner.seen.sent / 2);
  });
});
