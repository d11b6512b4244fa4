import { mkdirSync } from "node:fs";
import type { Config } from "../config/config-schema.js";
import { dataPaths } from "../config/paths.js";
import { Host } from "../host/host.js";
import type { Logger } from "../host/logger.js";
import { loadToken } from "./auth.js";
import { removeHostFile, runningHost, writeHostFile } from "./host-file.js";
import { startServer, type BerthServer, type ServerOptions } from "./http-server.js";

export interface BerthOptions {
  readonly config: Config;
  readonly dataDir: string;
  readonly listenHost: string;
  readonly port: number;
  readonly log: Logger;
  readonly webDir?: string;
  readonly maxMessageBytes?: number;
  /** A client with more unsent bytes than this is disconnected (default: the SDK's 64 MiB). */
  readonly maxBufferedBytes?: number;
  readonly events?: ServerOptions["events"];
}

export interface RunningBerth {
  readonly host: Host;
  readonly server: BerthServer;
  readonly token: string;
  /** Whether this start made the token (a new data directory, or its token file was deleted). */
  readonly tokenCreated: boolean;
  /** The dashboard's link with its token: `http://127.0.0.1:7420/?token=…`. */
  readonly dashboardLink: string;
  /** The start-up line with the dashboard link and its token, and the ACP URL. */
  readonly startupLine: string;
  /** The start-up line without the token, saying how to get the link. */
  readonly startupLineWithoutToken: (howToGetLink: string) => string;
  /** Stops everything, once; later calls return the same promise. */
  stop(): Promise<void>;
}

export class AlreadyRunningError extends Error {
  override readonly name = "AlreadyRunningError";
}

/**
 * Starts the host on a data directory and puts it on the network, then records the running
 * host in `<dataDir>/host.json`. Refuses a data directory another live Berth serves: its
 * start-up would reap that host's agents as leftovers.
 */
export async function startBerth(options: BerthOptions): Promise<RunningBerth> {
  const paths = dataPaths(options.dataDir);
  mkdirSync(paths.dataDir, { recursive: true, mode: 0o700 });
  const other = runningHost(paths.hostFile);
  if (other) {
    throw new AlreadyRunningError(`Berth is already running on ${paths.dataDir} (pid ${other.pid}, ${other.url}); if it is not, delete ${paths.hostFile}`);
  }
  const { token, created: tokenCreated } = loadToken(paths.token);
  const host = await Host.start({ config: options.config, dataDir: paths.dataDir, logger: options.log });
  let server: BerthServer;
  try {
    const { listenHost, port, log, webDir, maxMessageBytes, maxBufferedBytes, events } = options;
    server = await startServer({ host, token, listenHost, port, log, webDir, maxMessageBytes, maxBufferedBytes, events });
  } catch (error) {
    await host.shutdown();
    throw error;
  }
  writeHostFile(paths.hostFile, { url: server.url, pid: process.pid, startedAt: Date.now() });

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    server.stopListening();
    // Running turns are interrupted (reason `shutdown`) while their clients still listen.
    await host.shutdown();
    await server.close("Berth is shutting down");
    removeHostFile(paths.hostFile);
    options.log.info({}, "berth stopped");
  };
  return {
    host,
    server,
    token,
    tokenCreated,
    dashboardLink: `${server.url}/?token=${token}`,
    startupLine: `Berth is running: ${server.url}/?token=${token} (ACP: ${server.acpUrl})`,
    startupLineWithoutToken: (howToGetLink) => `Berth is running: ${server.url}/ (ACP: ${server.acpUrl}); ${howToGetLink}`,
    stop: () => (stopping ??= stop()),
  };
}
