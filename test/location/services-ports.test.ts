import { createServer, type AddressInfo, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { allocatePort } from "../../src/location/port-allocation.js";
import { waitForPort } from "../../src/location/wait-for-port.js";

const servers: Server[] = [];

async function listenOn(port: number): Promise<Server> {
  const server = createServer((socket) => socket.end());
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host: "127.0.0.1", exclusive: true }, resolve);
  });
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe("allocatePort", () => {
  it("gives a loopback port that is free again, so a service can bind it", async () => {
    const port = await allocatePort();
    expect(port).toBeGreaterThan(0);
    const server = await listenOn(port);
    expect(server.address()).toMatchObject({ address: "127.0.0.1", port });
  });
});

describe("waitForPort", () => {
  it("answers listening once a server accepts connections", async () => {
    // The port comes from the OS as the server binds it: nothing else can hold it meanwhile.
    const server = await listenOn(0);
    const { port } = server.address() as AddressInfo;
    expect(await waitForPort(port, { timeoutMs: 20_000, intervalMs: 10 })).toBe("listening");
  });

  it("tries again after being refused: a server that starts listening late is found", async () => {
    const port = await allocatePort();
    const waiting = waitForPort(port, { timeoutMs: 20_000, intervalMs: 10 });
    // Its first attempt is made before the port listens: `waitForPort` connects as it is called
    // and the connection is started on the next tick, refused at once on the loopback.
    await new Promise((resolve) => setImmediate(resolve));
    await listenOn(port);
    expect(await waiting).toBe("listening");
  });

  it("answers timed-out when nothing listens in time", async () => {
    const port = await allocatePort();
    expect(await waitForPort(port, { timeoutMs: 150, intervalMs: 10 })).toBe("timed-out");
  });

  it("answers aborted when its signal aborts, before or during the wait", async () => {
    const port = await allocatePort();
    expect(await waitForPort(port, { timeoutMs: 20_000, signal: AbortSignal.abort() })).toBe("aborted");
    const controller = new AbortController();
    const waiting = waitForPort(port, { timeoutMs: 20_000, intervalMs: 10, signal: controller.signal });
    controller.abort();
    expect(await waiting).toBe("aborted");
  });
});
