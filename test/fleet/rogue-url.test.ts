// A rogue `hosts.url` (docs/security.md, "A fleet"): whoever can write the shared database points host A's registered URL
// at a server of its own. Host B then sends it what it meant for A: a client's ACP upgrade relayed for A's session, the
// stream of A's own sessions B follows, the fleet-wide read of locations. The rogue server records each request and
// replays it, headers and all, to the real A at once: A must refuse every one (401), since each proof names the URL it
// was dialled at, which is not A's own. Two real `berth serve --store postgres://…` on one throwaway cluster.
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/store/postgres/connection.js";
import { usePostgresCluster } from "../support/postgres-cluster.js";
import { AcpClient, eventually, FleetTestBed, getJson } from "./fleet-harness.js";

const postgres = usePostgresCluster();
const bed = new FleetTestBed();
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await bed.cleanup();
});

const SECRET = "rogue-url-test-secret-0123456789abcdef";
type Hosts = { hosts: Array<{ id: string; url: string | null }> };

/** What the rogue server received, and what the real host answered when it was replayed there. */
interface Replayed {
  readonly method: string;
  readonly path: string;
  readonly proof: boolean;
  readonly status: number;
}

/** The rogue server: each request (an upgrade included) replayed to `target` with the headers it came with; its sender gets 502. */
async function rogueServer(target: URL): Promise<{ url: string; replayed: Replayed[] }> {
  const replayed: Replayed[] = [];
  const replay = (req: IncomingMessage): Promise<number> =>
    new Promise((resolve) => {
      const headers: IncomingHttpHeaders = { ...req.headers, host: target.host };
      const out = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers });
      out.once("upgrade", (response, socket) => {
        socket.destroy();
        resolve(response.statusCode ?? 0);
      });
      out.once("response", (response) => {
        response.destroy();
        resolve(response.statusCode ?? 0);
      });
      out.once("error", () => resolve(0));
      out.end();
    });
  const record = async (req: IncomingMessage) => {
    const status = await replay(req);
    replayed.push({ method: req.method ?? "", path: req.url ?? "", proof: req.headers["berth-cluster-proof"] !== undefined, status });
  };
  const server = createServer((req, res) => {
    void record(req).then(() => res.writeHead(502).end());
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex) => {
    void record(req).then(() => socket.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n"));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, replayed };
}

describe("a rogue URL in the shared store's hosts", () => {
  it("gets nothing from another host's requests that the host they were meant for lets in", async () => {
    const storeUrl = await postgres.freshDatabase();
    const fleet = { heartbeatInterval: "250ms", hostTtl: "20s", secret: SECRET };
    const workDir = bed.tempDir("berth-rogue-work-");
    const a = await bed.serve(storeUrl, "host-a", bed.tempDir("berth-rogue-a-"), { fleet });
    const b = await bed.serve(storeUrl, "host-b", bed.tempDir("berth-rogue-b-"), { fleet });
    const onA = new AcpClient(a.acpUrl, a.token);
    await onA.initialize();
    const sessionId = await onA.newSession(workDir);
    onA.close();

    const rogue = await rogueServer(new URL(a.url));
    const sql = connect(storeUrl, { max: 1 });
    try {
      await sql`UPDATE hosts SET url = ${rogue.url} WHERE id = 'host-a'`;
    } finally {
      await sql.end();
    }
    await eventually(
      async () => (await getJson<Hosts>(b.url, b.token, "/api/hosts")).body.hosts.some((host) => host.id === "host-a" && host.url === rogue.url),
      "B reads A's URL as the rogue server's",
    );

    // A client of B opens A's session: B relays the upgrade to the rogue server, which replays it to A.
    const onB = new AcpClient(b.acpUrl, b.token);
    try {
      await onB.initialize();
      await onB.resume(sessionId, workDir).catch(() => undefined);
    } finally {
      onB.close();
    }
    // B's fleet-wide read of locations goes there too.
    await getJson(b.url, b.token, "/api/locations");
    const paths = () => rogue.replayed.map((request) => request.path.split("?")[0]);
    await eventually(
      async () => ["/acp", "/api/own-sessions/events", "/api/locations"].every((path) => paths().includes(path)),
      "the rogue server received B's relay, its stream of A's sessions and its read of A's locations",
      30_000,
    );
    // Every request came with a proof, and A let none of them in.
    expect(rogue.replayed.length).toBeGreaterThanOrEqual(3);
    for (const request of rogue.replayed) expect(request, `${request.method} ${request.path}`).toMatchObject({ proof: true, status: 401 });
    const refused = () => a.server.logLines().filter((line) => line.msg === "peer host's request refused");
    await expect
      .poll(() => refused().map((line) => String(line.reason)))
      .toContain(`a wrong proof (another secret, host, URL than this host's ${a.url}, method or path)`);
  }, 120_000);
});
