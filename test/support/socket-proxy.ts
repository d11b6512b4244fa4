import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

/**
 * How a connection's client side (`near`) reaches the server (`far`); `connection` counts from 1. By default
 * everything goes through.
 */
export type Forward = (near: Socket, far: Socket, connection: number) => void;

const passThrough: Forward = (near, far) => near.pipe(far);

/**
 * A proxy in front of a server's unix socket `target` (PostgreSQL's), listening on a unix socket path or on a
 * loopback TCP port: everything the server sends goes back as it is; what the client sends goes through `forward`.
 * The end or failure of either side ends the other, with no error sent first.
 */
export class SocketProxy {
  private readonly pairs = new Set<readonly [Socket, Socket]>();
  private connections = 0;

  private constructor(
    private readonly server: Server,
    target: string,
    forward: Forward,
  ) {
    server.on("connection", (near) => {
      const far = connect(target);
      const pair = [near, far] as const;
      this.pairs.add(pair);
      for (const [from, to] of [pair, [far, near] as const]) {
        from.on("error", () => to.destroy());
        from.on("close", () => {
          to.destroy();
          this.pairs.delete(pair);
        });
      }
      far.pipe(near);
      forward(near, far, ++this.connections);
    });
  }

  static async open(target: string, listenOn: { readonly path: string } | "loopback", forward: Forward = passThrough): Promise<SocketProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => (listenOn === "loopback" ? server.listen(0, "127.0.0.1", resolve) : server.listen(listenOn.path, resolve)));
    return new SocketProxy(server, target, forward);
  }

  /** The loopback port it listens on. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Closes both ends of every connection so far, as a server that went away would: no error is sent first. */
  cut(): void {
    for (const pair of this.pairs) for (const socket of pair) socket.destroy();
    this.pairs.clear();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
