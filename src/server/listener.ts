import { createServer, type Server, type Socket } from "node:net";
import { hostForUrl } from "./auth.js";

class PortInUseError extends Error {
  override readonly name = "PortInUseError";
}

/**
 * The listening socket, bound before anything else starts: the port the OS gave (`0` picks a free
 * one) is known before the host registers with its fleet, so `fleet.url` can name it. Connections
 * that arrive before the HTTP server is attached wait for it.
 */
export class BoundListener {
  readonly port: number;
  private waiting: Socket[] | undefined = [];
  private onConnection: ((socket: Socket) => void) | undefined;

  private constructor(private readonly server: Server) {
    const address = server.address();
    if (typeof address !== "object" || address === null) throw new Error("the listener is not bound to a port");
    this.port = address.port;
    server.on("connection", (socket) => (this.onConnection ? this.onConnection(socket) : this.waiting?.push(socket)));
  }

  static bind(host: string, port: number): Promise<BoundListener> {
    const server = createServer();
    return new Promise((resolve, reject) => {
      const failed = (error: NodeJS.ErrnoException) => {
        if (error.code === "EADDRINUSE") reject(new PortInUseError(`cannot listen on ${hostForUrl(host)}:${port}: the port is already in use`));
        else reject(new Error(`cannot listen on ${hostForUrl(host)}:${port}: ${error.message}`));
      };
      server.once("error", failed);
      server.listen(port, host, () => {
        server.off("error", failed);
        resolve(new BoundListener(server));
      });
    });
  }

  /** Hands every connection, those that waited first, to `onConnection`. */
  attach(onConnection: (socket: Socket) => void): void {
    this.onConnection = onConnection;
    for (const socket of this.waiting ?? []) onConnection(socket);
    this.waiting = undefined;
  }

  /**
   * Closes every new connection at once while `max` are open (Node's own `maxConnections`: the socket is
   * accepted and closed, so the listener's backlog never fills), calling `onRefused` for each.
   */
  limitConnections(max: number, onRefused: () => void): void {
    this.server.maxConnections = max;
    this.server.on("drop", onRefused);
  }

  /** Accepts no more connections; one that waited for a server that never came is closed. */
  close(): void {
    this.server.close();
    for (const socket of this.waiting ?? []) socket.destroy();
    this.waiting = undefined;
  }
}

/** Addresses that mean "every interface": a URL made of them would name no host a peer can reach. */
const UNSPECIFIED = new Set(["0.0.0.0", "::", "[::]", ""]);

/**
 * The URL a fleet's peers reach this host at when `fleet.url` names none: the address it listens on
 * and the port it was given, if that address is a specific one (`--host 10.0.0.5`, or loopback for a
 * fleet on one machine); none when it listens on every interface (which of its addresses the peers
 * reach is theirs to say).
 */
export function defaultFleetUrl(listenHost: string, port: number): string | null {
  return UNSPECIFIED.has(listenHost) ? null : `http://${hostForUrl(listenHost)}:${port}`;
}
