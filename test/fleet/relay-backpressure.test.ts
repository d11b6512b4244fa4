// Backpressure across the relay (docs/fleet.md, "Backpressure across the relay"): a client of host B replays a long
// journal of host A's session through B while it reads slowly. B stops reading from A while its client is behind, so
// A's replay waits for the client (as it does for a client of its own) and nothing piles up on B: the client is never
// cut and gets every event, in order (that B holds its reads back a moment at a time only, so that the owner's pings
// are answered: test/server/peer-relay.test.ts). Two real hosts in this process (the limits are options of the server,
// not of `berth serve`), on one throwaway PostgreSQL cluster, over real sockets.
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { cleanUp, initializeParams, RawSocket, startFixture, tempDir, waitUntil } from "../server/server-harness.js";

const postgres = usePostgresCluster();
afterEach(async () => {
  await cleanUp();
});

const SECRET = "relay-backpressure-test-secret";
const CHUNK = 4096;

/** Hosts A and B of one fleet (each with its buffer limit for one client), and a session on A with `chunks` × 4 kB of history. */
async function longJournalOnA(limits: { a: number; b: number }, chunks: number) {
  const store = await postgres.freshDatabase();
  const workDir = tempDir("berth-relay-bp-work-");
  const fleet = (hostId: string) => ({ store, fleet: { hostId, secret: SECRET, heartbeatInterval: "250ms", hostTtl: "5s" } });
  const a = await startFixture({ config: fleet("host-a"), workDir, maxBufferedBytes: limits.a });
  const b = await startFixture({ config: fleet("host-b"), workDir, maxBufferedBytes: limits.b });
  const sessionId = (await a.berth.host.createSession({ cwd: workDir })).id;
  expect((await a.berth.host.prompt(sessionId, [{ type: "text", text: `/flood ${chunks} ${CHUNK}` }])).stopReason).toBe("end_turn");
  return { b, sessionId, workDir };
}

/**
 * A client of B that reads until it has `bytesPerTick` (at least what one read of the socket gives), then nothing until
 * the next tick; `stop()` lets it read freely.
 */
async function slowClientOf(b: { acpUrl: string; token: string }, { bytesPerTick, tickMs }: { bytesPerTick: number; tickMs: number }) {
  const slow = await RawSocket.open(b.acpUrl, b.token);
  slow.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams });
  await slow.response(1);
  const tcp = (slow.ws as unknown as { _socket: Socket })._socket;
  let readThisTick = 0;
  const throttle = (chunk: Buffer) => {
    readThisTick += chunk.length;
    if (readThisTick >= bytesPerTick) tcp.pause();
  };
  tcp.on("data", throttle);
  const reader = setInterval(() => {
    readThisTick = 0;
    tcp.resume();
  }, tickMs);
  const stop = () => {
    clearInterval(reader);
    tcp.off("data", throttle);
    tcp.resume();
  };
  return { slow, stop };
}

/** Loads the session through B and waits until B answered or cut the client; then the client reads freely. */
async function loadSlowly(slow: RawSocket, stop: () => void, sessionId: string, workDir: string): Promise<void> {
  try {
    slow.send({ jsonrpc: "2.0", id: 2, method: "session/load", params: { sessionId, cwd: workDir, mcpServers: [] } });
    const answered = () => slow.messages.some((message) => message.id === 2);
    await waitUntil(() => answered() || slow.ws.readyState !== slow.ws.OPEN, "the load is answered, or the client cut", 90_000);
  } finally {
    stop();
  }
  expect(slow.ws.readyState).toBe(slow.ws.OPEN);
  expect((await slow.response(2)).result).toBeDefined();
}

const replayed = (slow: RawSocket) =>
  slow.messages.flatMap((message) => {
    const text = (message.params as { update?: { content?: { text?: string } } } | undefined)?.update?.content?.text;
    return text?.length === CHUNK ? [text] : [];
  });

describe("the relay and a slow client", () => {
  it("replays another host's long journal to a client that reads slowly: the owner waits for it, the relay never cuts it", async () => {
    // 12 MB of history; each host cuts a client 1 MiB behind.
    const { b, sessionId, workDir } = await longJournalOnA({ a: 1024 * 1024, b: 1024 * 1024 }, 3000);
    // About 5 MB/s: far below what the hosts relay, and fast enough that what waits in the kernel's buffers ahead of a
    // ping is read within a ping interval (a client that cannot is taken as gone, docs/fleet.md).
    const { slow, stop } = await slowClientOf(b, { bytesPerTick: 256 * 1024, tickMs: 50 });
    await loadSlowly(slow, stop, sessionId, workDir);
    expect(replayed(slow)).toHaveLength(3000);
    await slow.close();
  }, 120_000);
});
