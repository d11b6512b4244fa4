// Backpressure across the relay (docs/fleet.md, "Routing"): a client of host B replays a long journal of host A's
// session through B while it reads slowly. B stops reading from A while its client is behind, so A's replay waits for
// the client (as it does for a client of its own) and nothing piles up on B: the client is never cut and gets every
// event, in order. Two real hosts in this process (the limits are options of the server, not of `berth serve`), on one
// throwaway PostgreSQL cluster, over real sockets.
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { cleanUp, initializeParams, RawSocket, startFixture, tempDir, waitUntil } from "../server/server-harness.js";

const postgres = usePostgresCluster();
afterEach(async () => {
  await cleanUp();
});

const SECRET = "relay-backpressure-test-secret";
/** What each host buffers for one client before cutting it: a twelfth of the replay. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

describe("the relay and a slow client", () => {
  it("replays another host's long journal to a client that reads slowly: the owner waits for it, the relay never cuts it", async () => {
    const store = await postgres.freshDatabase();
    const workDir = tempDir("berth-relay-bp-work-");
    const fleet = (hostId: string) => ({ store, fleet: { hostId, secret: SECRET, heartbeatInterval: "250ms", hostTtl: "5s" } });
    const a = await startFixture({ config: fleet("host-a"), workDir, maxBufferedBytes: MAX_BUFFERED_BYTES });
    const b = await startFixture({ config: fleet("host-b"), workDir, maxBufferedBytes: MAX_BUFFERED_BYTES });
    const sessionId = (await a.berth.host.createSession({ cwd: workDir })).id;
    // 12 MB of history.
    expect((await a.berth.host.prompt(sessionId, [{ type: "text", text: "/flood 3000 4096" }])).stopReason).toBe("end_turn");

    const slow = await RawSocket.open(b.acpUrl, b.token);
    slow.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
    await slow.response(1);
    // A slow client: it reads 64 kB, then nothing until the next 50 ms (about 1.3 MB/s, far below what the hosts relay).
    const tcp = (slow.ws as unknown as { _socket: Socket })._socket;
    let readThisTick = 0;
    tcp.on("data", (chunk: Buffer) => {
      readThisTick += chunk.length;
      if (readThisTick >= 64 * 1024) tcp.pause();
    });
    const reader = setInterval(() => {
      readThisTick = 0;
      tcp.resume();
    }, 50);
    try {
      slow.send({ jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId, cwd: workDir, mcpServers: [] } });
      const answered = () => slow.messages.some((message) => message.id === 2);
      await waitUntil(() => answered() || slow.ws.readyState !== slow.ws.OPEN, "the load is answered, or the client cut", 60_000);
    } finally {
      clearInterval(reader);
      tcp.resume();
    }
    expect(slow.ws.readyState).toBe(slow.ws.OPEN);
    expect((await slow.response(2)).result).toBeDefined();
    const chunks = slow.messages.flatMap((message) => {
      const text = (message.params as { update?: { content?: { text?: string } } } | undefined)?.update?.content?.text;
      return text?.length === 4096 ? [text] : [];
    });
    expect(chunks).toHaveLength(3000);
    await slow.close();
  }, 120_000);
});
