import { createServer, type AddressInfo } from "node:net";

export const LOOPBACK_HOST = "127.0.0.1";

/**
 * A port that was free on the loopback address a moment ago: bind port 0, read
 * what the kernel chose, close. Another process may take it before the service
 * binds it; the service then fails to listen and its start fails with its stderr.
 */
export async function allocatePort(): Promise<number> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ port: 0, host: LOOPBACK_HOST, exclusive: true }, resolve);
    });
    return (server.address() as AddressInfo).port;
  } catch (error) {
    throw new Error(`cannot allocate a free port on ${LOOPBACK_HOST}: ${(error as Error).message}`, { cause: error });
  } finally {
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
