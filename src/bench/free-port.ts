import { createServer, type AddressInfo } from "node:net";

/**
 * A loopback port the OS gives now and takes back: for a fleet host that must register the URL it will
 * listen at (`fleet.url`) before it starts (the benchmark and the fleet tests).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
