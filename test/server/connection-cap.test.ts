import { writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, tempDir, waitUntil } from "./server-harness.js";
import { BerthProcess } from "./serve-process.js";

const processes: BerthProcess[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const berth of processes.splice(0)) {
    berth.signal("SIGTERM");
    await berth.exited;
    berth.killGroup();
  }
  await cleanUp();
});

/** A client that opens a request and never finishes its headers (a slow or hostile one); what it received, and whether it was closed. */
function slowClient(port: number) {
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  const client = { received: "", closed: false };
  socket.on("data", (chunk: Buffer) => (client.received += chunk.toString()));
  socket.on("error", () => undefined);
  socket.on("close", () => (client.closed = true));
  socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  return new Promise<typeof client>((resolve) => socket.once("connect", () => resolve(client)));
}

describe("open connections are capped (server.maxConnections), and slow ones cut (server.headersTimeout)", () => {
  it("closes the connections over the cap at once, logging it once per interval; slow ones get 408; /healthz answers again", async () => {
    const dir = tempDir("berth-cap-");
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ server: { maxConnections: 20, headersTimeout: "3s" } }), { mode: 0o600 });
    const berth = new BerthProcess(["serve", "--port", "0", "--data-dir", join(dir, "data"), "--config", config], {
      XDG_CONFIG_HOME: dir,
      BERTH_LOG_LEVEL: "info",
    });
    processes.push(berth);
    const { url } = await berth.startupLine();
    const port = Number(new URL(url).port);

    const clients: Awaited<ReturnType<typeof slowClient>>[] = [];
    for (let i = 0; i < 25; i++) clients.push(await slowClient(port));
    await waitUntil(() => clients.every((c) => c.closed), "every slow client was closed", 30_000);
    // Five over the cap were closed before anything was said to them; the twenty under it got Node's 408 at the header timeout.
    expect(clients.filter((c) => c.received === "")).toHaveLength(5);
    expect(clients.filter((c) => c.received.startsWith("HTTP/1.1 408"))).toHaveLength(20);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    // One line at the first refusal; the four refused within the next 10 s in one line after them.
    const refusals = () =>
      berth
        .logLines()
        .filter((line) => line.msg === "connections refused: too many open connections (server.maxConnections); they were closed at once");
    await waitUntil(() => refusals().length === 2, "the refusals were logged", 30_000);
    expect(refusals()).toMatchObject([
      { level: 40, refused: 1, limit: 20 },
      { level: 40, refused: 4, limit: 20 },
    ]);
  }, 60_000);
});
